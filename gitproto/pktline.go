package gitproto

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	band "github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
)

// pkt-line framing (git's Documentation/gitprotocol-common.txt) is go-git's
// plumbing/format/pktline: four hex digits of length including themselves,
// then the payload; "0000" is a flush. Protocol v2 adds "0001", a
// delimiter, and "0002", a response end, which go-git v5's Scanner refuses
// as invalid lengths; pktReader peeks at the length and reads those two
// itself, handing every other packet to the Scanner.

// errPktLine is returned for input that is not pkt-line framed.
var errPktLine = errors.New("malformed pkt-line")

// pktKind is what pktReader.read found.
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
	r  *bufio.Reader // what follows the packets (a push's pack) is read from it too
	sc *pktline.Scanner
}

func newPktReader(r io.Reader) *pktReader {
	br := bufio.NewReaderSize(r, 64<<10)
	return &pktReader{r: br, sc: pktline.NewScanner(br)}
}

// read returns the next packet. The payload is valid until the next call.
func (p *pktReader) read() (pktKind, []byte, error) {
	if hdr, err := p.r.Peek(4); err == nil && hdr[0] == '0' && hdr[1] == '0' && hdr[2] == '0' {
		switch hdr[3] {
		case '1':
			p.r.Discard(4)
			return pktDelim, nil, nil
		case '2':
			p.r.Discard(4)
			return pktEnd, nil, nil
		}
	}
	if !p.sc.Scan() {
		if err := p.sc.Err(); err != nil {
			// Truncated, a bad length, or an "ERR" packet from the client.
			return 0, nil, fmt.Errorf("%w: %v", errPktLine, err)
		}
		return pktEOF, nil, nil
	}
	b := p.sc.Bytes()
	if len(b) == 0 { // the Scanner's flush
		return pktFlush, nil, nil
	}
	return pktData, b, nil
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

// pktWriter writes pkt-lines with go-git's Encoder and remembers the
// first error.
type pktWriter struct {
	w   io.Writer
	enc *pktline.Encoder
	err error
}

func newPktWriter(w io.Writer) *pktWriter {
	return &pktWriter{w: w, enc: pktline.NewEncoder(w)}
}

// line writes one formatted packet; a newline is added when missing.
func (p *pktWriter) line(format string, args ...any) {
	if p.err != nil {
		return
	}
	s := fmt.Sprintf(format, args...)
	if len(s) == 0 || s[len(s)-1] != '\n' {
		s += "\n"
	}
	p.err = p.enc.EncodeString(s)
}

func (p *pktWriter) flush() {
	if p.err == nil {
		p.err = p.enc.Flush()
	}
}

// delim writes a delimiter packet (protocol v2 sections), which go-git
// v5's Encoder does not write.
func (p *pktWriter) delim() {
	if p.err == nil {
		_, p.err = io.WriteString(p.w, "0001")
	}
}

// sideband multiplexes channels over pkt-lines (side-band and
// side-band-64k, go-git's sideband channels and sizes). Without side-band
// it writes data raw and drops progress. Unlike go-git's sideband.Muxer it
// writes each packet's header and payload without copying the payload,
// and can end the stream with an error the client prints.
type sideband struct {
	w      io.Writer
	on     bool
	max    int // payload per packet (band byte excluded)
	hdr    [5]byte
	err    error
	closed bool
}

func newSideband(w io.Writer, on, small bool) *sideband {
	size := band.MaxPackedSize64k
	if small {
		size = band.MaxPackedSize // plain side-band: 1000-byte packets
	}
	return &sideband{w: w, on: on, max: size - 5}
}

func (s *sideband) send(ch band.Channel, b []byte) error {
	if s.err != nil {
		return s.err
	}
	if !s.on {
		if ch == band.PackData {
			_, s.err = s.w.Write(b)
		}
		return s.err
	}
	for len(b) > 0 {
		n := min(len(b), s.max)
		putHex4(s.hdr[:4], n+5)
		s.hdr[4] = byte(ch)
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

func putHex4(dst []byte, n int) {
	const digits = "0123456789abcdef"
	dst[0] = digits[n>>12&0xf]
	dst[1] = digits[n>>8&0xf]
	dst[2] = digits[n>>4&0xf]
	dst[3] = digits[n&0xf]
}

// Write sends b on the data band.
func (s *sideband) Write(b []byte) (int, error) {
	if err := s.send(band.PackData, b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// progress sends a message the client prints as "remote: ...".
func (s *sideband) progress(format string, args ...any) {
	s.send(band.ProgressMessage, []byte(fmt.Sprintf(format, args...)))
}

// fail sends a fatal error the client prints, then ends the stream.
func (s *sideband) fail(msg string) {
	if s.on {
		s.send(band.ErrorMessage, []byte(msg+"\n"))
	} else {
		newPktWriter(s.w).line("ERR %s", msg)
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
		_, s.err = s.w.Write(pktline.FlushPkt)
	}
	return s.err
}
