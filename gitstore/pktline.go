package gitstore

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// pkt-line framing (git's Documentation/gitprotocol-common.txt): four hex
// digits of length including themselves, then the payload. "0000" is a
// flush, "0001" a delimiter and "0002" a response end (protocol v2 only).

const (
	pktMaxLen  = 65520         // largest pkt-line, length prefix included
	pktMaxData = pktMaxLen - 4 // largest payload
	// sidebandMax is the payload of one side-band-64k packet, less its band byte.
	sidebandMax = pktMaxData - 1
)

// errPktLine is returned for input that is not pkt-line framed.
var errPktLine = errors.New("malformed pkt-line")

// pktKind is what readPkt found.
type pktKind int

const (
	pktData pktKind = iota
	pktFlush
	pktDelim
	pktEnd
	pktEOF // the input ended cleanly between packets
)

// pktReader reads pkt-lines.
type pktReader struct {
	r   *bufio.Reader
	buf []byte
}

func newPktReader(r io.Reader) *pktReader {
	return &pktReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// read returns the next packet. The payload is valid until the next call.
func (p *pktReader) read() (pktKind, []byte, error) {
	var hdr [4]byte
	n, err := io.ReadFull(p.r, hdr[:])
	if err == io.EOF && n == 0 {
		return pktEOF, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("%w: truncated length", errPktLine)
	}
	size := 0
	for _, c := range hdr {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, nil, fmt.Errorf("%w: bad length %q", errPktLine, hdr[:])
		}
		size = size<<4 | int(v)
	}
	switch {
	case size == 0:
		return pktFlush, nil, nil
	case size == 1:
		return pktDelim, nil, nil
	case size == 2:
		return pktEnd, nil, nil
	case size < 4 || size > pktMaxLen:
		return 0, nil, fmt.Errorf("%w: bad length %d", errPktLine, size)
	}
	if cap(p.buf) < size-4 {
		p.buf = make([]byte, size-4)
	}
	p.buf = p.buf[:size-4]
	if _, err := io.ReadFull(p.r, p.buf); err != nil {
		return 0, nil, fmt.Errorf("%w: truncated payload", errPktLine)
	}
	return pktData, p.buf, nil
}

// readLine returns the next data packet without its trailing newline, or
// flush=true for a flush packet. io.EOF means the input ended.
func (p *pktReader) readLine() (line string, flush bool, err error) {
	kind, b, err := p.read()
	switch {
	case err != nil:
		return "", false, err
	case kind == pktEOF:
		return "", false, io.EOF
	case kind == pktFlush:
		return "", true, nil
	case kind != pktData:
		return "", false, fmt.Errorf("%w: unexpected special packet", errPktLine)
	}
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	return string(b), false, nil
}

// pktWriter writes pkt-lines and remembers the first error.
type pktWriter struct {
	w   io.Writer
	err error
}

func (p *pktWriter) write(b []byte) {
	if p.err != nil {
		return
	}
	for len(b) > 0 {
		n := min(len(b), pktMaxData)
		var hdr [4]byte
		putHex4(hdr[:], n+4)
		if _, p.err = p.w.Write(hdr[:]); p.err != nil {
			return
		}
		if _, p.err = p.w.Write(b[:n]); p.err != nil {
			return
		}
		b = b[n:]
	}
}

// line writes one formatted packet; a newline is added when missing.
func (p *pktWriter) line(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if len(s) == 0 || s[len(s)-1] != '\n' {
		s += "\n"
	}
	p.write([]byte(s))
}

func (p *pktWriter) flush() {
	if p.err == nil {
		_, p.err = io.WriteString(p.w, "0000")
	}
}

// delim writes a delimiter packet (protocol v2 sections).
func (p *pktWriter) delim() {
	if p.err == nil {
		_, p.err = io.WriteString(p.w, "0001")
	}
}

func putHex4(dst []byte, n int) {
	const digits = "0123456789abcdef"
	dst[0] = digits[n>>12&0xf]
	dst[1] = digits[n>>8&0xf]
	dst[2] = digits[n>>4&0xf]
	dst[3] = digits[n&0xf]
}

// Side-band channels (side-band-64k).
const (
	bandData     = 1
	bandProgress = 2
	bandError    = 3
)

// sideband multiplexes channels over pkt-lines. Without side-band it
// writes data raw and drops progress.
type sideband struct {
	w      io.Writer
	on     bool
	max    int // payload per packet (band byte excluded)
	hdr    [5]byte
	err    error
	closed bool
}

func newSideband(w io.Writer, on, small bool) *sideband {
	max := sidebandMax
	if small {
		max = 1000 - 5 // plain side-band: 1000-byte packets
	}
	return &sideband{w: w, on: on, max: max}
}

func (s *sideband) send(band byte, b []byte) error {
	if s.err != nil {
		return s.err
	}
	if !s.on {
		if band == bandData {
			_, s.err = s.w.Write(b)
		}
		return s.err
	}
	for len(b) > 0 {
		n := min(len(b), s.max)
		putHex4(s.hdr[:4], n+5)
		s.hdr[4] = band
		if _, s.err = s.w.Write(s.hdr[:]); s.err != nil {
			return s.err
		}
		if _, s.err = s.w.Write(b[:n]); s.err != nil {
			return s.err
		}
		b = b[n:]
	}
	return nil
}

// Write sends b on the data band.
func (s *sideband) Write(b []byte) (int, error) {
	if err := s.send(bandData, b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// progress sends a message the client prints as "remote: ...".
func (s *sideband) progress(format string, args ...any) {
	s.send(bandProgress, []byte(fmt.Sprintf(format, args...)))
}

// fail sends a fatal error the client prints, then ends the stream.
func (s *sideband) fail(msg string) {
	if s.on {
		s.send(bandError, []byte(msg+"\n"))
	} else {
		pw := &pktWriter{w: s.w}
		pw.line("ERR %s", msg)
	}
	s.close()
}

// close ends a side-band stream with a flush.
func (s *sideband) close() error {
	if s.closed || s.err != nil {
		return s.err
	}
	s.closed = true
	if s.on {
		_, s.err = io.WriteString(s.w, "0000")
	}
	return s.err
}
