package proxy

import "encoding/binary"

// frameScanner follows the frame boundaries of one direction of a
// WebSocket stream (RFC 6455 §5.2) without buffering it: it reads each
// frame's header as it passes and skips the payload by its length. The
// proxy needs no more than that to tell messages (text, binary and their
// continuations) from control frames (ping, pong, close): Jupyter pings
// every open kernel WebSocket every 30 s and the browser answers with a
// pong, so counting those as activity would keep a forgotten tab's
// workbench alive for ever.
type frameScanner struct {
	hdr  [14]byte // the current frame's header, as far as it has arrived
	n    int      // header bytes collected
	need int      // header length, known once the first two bytes are in
	skip uint64   // payload bytes of the current frame still to pass
}

// scan consumes the next bytes of the stream and reports whether a data
// frame began in them.
func (s *frameScanner) scan(b []byte) (data bool) {
	for len(b) > 0 {
		if s.skip > 0 {
			k := min(uint64(len(b)), s.skip)
			s.skip -= k
			b = b[k:]
			continue
		}
		s.hdr[s.n] = b[0]
		s.n++
		b = b[1:]
		if s.n == 2 {
			s.need = 2
			switch s.hdr[1] & 0x7f {
			case 126:
				s.need += 2
			case 127:
				s.need += 8
			}
			if s.hdr[1]&0x80 != 0 { // masked: every client frame is
				s.need += 4
			}
		}
		if s.n < 2 || s.n < s.need {
			continue
		}
		switch l := s.hdr[1] & 0x7f; l {
		case 126:
			s.skip = uint64(binary.BigEndian.Uint16(s.hdr[2:4]))
		case 127:
			s.skip = binary.BigEndian.Uint64(s.hdr[2:10])
		default:
			s.skip = uint64(l)
		}
		// Opcodes 0x0–0x7 are data (continuation, text, binary, reserved);
		// 0x8–0xF are control.
		if s.hdr[0]&0x08 == 0 {
			data = true
		}
		s.n, s.need = 0, 0
	}
	return data
}
