// Package httpstatus is the one table from quire error codes to HTTP
// statuses, shared by the transports that answer over HTTP (httpapi and
// web), so an error gets the same status from the API and the UI. It
// imports only the root package and net/http.
package httpstatus

import (
	"net/http"

	"github.com/quire/quire"
)

var statusOf = map[quire.Code]int{
	quire.EINVALID:       http.StatusBadRequest,
	quire.EUNAUTHORIZED:  http.StatusUnauthorized,
	quire.EFORBIDDEN:     http.StatusForbidden,
	quire.ENOTFOUND:      http.StatusNotFound,
	quire.ECONFLICT:      http.StatusConflict,
	quire.EPRECONDITION:  http.StatusPreconditionFailed,
	quire.ETOOLARGE:      http.StatusRequestEntityTooLarge,
	quire.EUNPROCESSABLE: http.StatusUnprocessableEntity,
	quire.ERATELIMIT:     http.StatusTooManyRequests,
	quire.EUNAVAILABLE:   http.StatusServiceUnavailable,
	quire.ENOSPACE:       http.StatusInsufficientStorage,
	quire.EINTERNAL:      http.StatusInternalServerError,
	quire.ETIMEOUT:       http.StatusRequestTimeout,
	quire.EMETHOD:        http.StatusMethodNotAllowed,
	quire.EMEDIATYPE:     http.StatusUnsupportedMediaType,
	quire.EREVIEW:        http.StatusConflict,
	quire.EHEADMOVED:     http.StatusConflict,
	quire.ELABELPROTECT:  http.StatusConflict,
	quire.ENOPROVIDER:    http.StatusConflict,
	quire.EPROVIDER:      http.StatusBadGateway,
	quire.EEVALUATION:    http.StatusConflict,
}

// Of returns the HTTP status of code: 500 for a code the table lacks.
func Of(code quire.Code) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}
