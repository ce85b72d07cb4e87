package odb

import "testing"

func TestEntryHeaderRoundTrip(t *testing.T) {
	for _, size := range []int64{0, 1, 15, 16, 127, 128, 1 << 20, 1<<40 + 3} {
		for _, typ := range []byte{PackCommit, PackTree, PackBlob, PackTag} {
			b := AppendEntryHeader(nil, typ, size)
			h, err := parseEntryHeader(b, 100)
			if err != nil || h.typ != typ || h.size != size || h.hdrLen != len(b) {
				t.Fatalf("type %d size %d: got %+v, %v", typ, size, h, err)
			}
		}
	}
	for _, ofs := range []int64{1, 127, 128, 16383, 16384, 1 << 30} {
		b := appendOfs(AppendEntryHeader(nil, PackOfsDelta, 10), ofs)
		h, err := parseEntryHeader(b, ofs+5)
		if err != nil || h.baseOff != 5 {
			t.Fatalf("ofs %d: got %+v, %v", ofs, h, err)
		}
	}
}
