package proxy

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// frame encodes one WebSocket frame (RFC 6455 §5.2), masked as a browser
// sends it when masked is set.
func frame(opcode byte, payload []byte, masked bool) []byte {
	var b bytes.Buffer
	b.WriteByte(0x80 | opcode) // FIN
	maskBit := byte(0)
	if masked {
		maskBit = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		b.WriteByte(maskBit | byte(n))
	case n <= 0xffff:
		b.WriteByte(maskBit | 126)
		_ = binary.Write(&b, binary.BigEndian, uint16(n))
	default:
		b.WriteByte(maskBit | 127)
		_ = binary.Write(&b, binary.BigEndian, uint64(n))
	}
	key := [4]byte{0x12, 0x34, 0x56, 0x78}
	if masked {
		b.Write(key[:])
	}
	for i, c := range payload {
		if masked {
			c ^= key[i%4]
		}
		b.WriteByte(c)
	}
	return b.Bytes()
}

type testFrame struct {
	name string
	raw  []byte
	data bool
}

func testFrames() []testFrame {
	big := bytes.Repeat([]byte("x"), 70_000)  // 64-bit length
	mid := bytes.Repeat([]byte{0x88}, 300)    // 16-bit length; bytes that look like a close opcode
	pingish := bytes.Repeat([]byte{0x89}, 20) // payload that looks like ping headers
	return []testFrame{
		{"text", frame(0x1, []byte(`{"header":{"msg_type":"execute_request"}}`), true), true},
		{"pong", frame(0xA, nil, true), false},
		{"binary 16-bit length", frame(0x2, mid, true), true},
		{"ping with payload", frame(0x9, []byte("hb"), true), false},
		{"text of ping-like bytes", frame(0x1, pingish, true), true},
		{"binary 64-bit length", frame(0x2, big, true), true},
		{"empty text", frame(0x1, nil, true), true},
		{"unmasked pong", frame(0xA, []byte("x"), false), false},
		{"close", frame(0x8, []byte{0x03, 0xe8}, true), false},
	}
}

func TestFrameScannerWholeFrames(t *testing.T) {
	var s frameScanner
	for _, f := range testFrames() {
		if got := s.scan(f.raw); got != f.data {
			t.Errorf("%s: data %v, want %v", f.name, got, f.data)
		}
		if s.n != 0 || s.skip != 0 {
			t.Fatalf("%s: scanner not at a frame boundary after the whole frame (n=%d skip=%d)", f.name, s.n, s.skip)
		}
	}
}

// Byte by byte, each data frame is reported exactly once: on the byte that
// completes its header.
func TestFrameScannerByteByByte(t *testing.T) {
	var s frameScanner
	for _, f := range testFrames() {
		reports := 0
		for i := range f.raw {
			if s.scan(f.raw[i : i+1]) {
				reports++
			}
		}
		want := 0
		if f.data {
			want = 1
		}
		if reports != want {
			t.Errorf("%s: reported %d times, want %d", f.name, reports, want)
		}
	}
}

// However the stream is cut into writes, the scanner ends at a frame
// boundary and a write is reported exactly when a data frame starts in it.
func TestFrameScannerRandomSplits(t *testing.T) {
	frames := testFrames()
	var stream []byte
	var dataStarts []int // offset of the last header byte of each data frame
	for _, f := range frames {
		if f.data {
			dataStarts = append(dataStarts, len(stream)+headerLen(f.raw)-1)
		}
		stream = append(stream, f.raw...)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var s frameScanner
		for off := 0; off < len(stream); {
			n := 1 + rng.IntN(200)
			if rng.IntN(10) == 0 {
				n = 1 + rng.IntN(80_000)
			}
			end := min(off+n, len(stream))
			want := false
			for _, d := range dataStarts {
				if d >= off && d < end {
					want = true
				}
			}
			if got := s.scan(stream[off:end]); got != want {
				t.Fatalf("round %d: write [%d,%d): data %v, want %v", round, off, end, got, want)
			}
			off = end
		}
		if s.n != 0 || s.skip != 0 {
			t.Fatalf("round %d: not at a frame boundary at the end (n=%d skip=%d)", round, s.n, s.skip)
		}
	}
}

func headerLen(raw []byte) int {
	n := 2
	switch raw[1] & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if raw[1]&0x80 != 0 {
		n += 4
	}
	return n
}
