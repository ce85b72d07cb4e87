package quire_test

import (
	"testing"
	"time"

	"github.com/quire/quire"
)

var limitStrings = []struct {
	in   string
	want quire.Limit
	bad  bool
}{
	{in: "", want: quire.Limit{}},
	{in: "0", want: quire.Limit{}},
	{in: "off", want: quire.Limit{}},
	{in: "100/1s", want: quire.Limit{Rate: 100, Period: time.Second}},
	{in: "100/s", want: quire.Limit{Rate: 100, Period: time.Second}},
	{in: "10/15m", want: quire.Limit{Rate: 10, Period: 15 * time.Minute}},
	{in: "50/1s:200", want: quire.Limit{Rate: 50, Period: time.Second, Burst: 200}},
	{in: "100", bad: true},
	{in: "-1/s", bad: true},
	{in: "1/0s", bad: true},
	{in: "1/s:0", bad: true},
	{in: "1/fortnight", bad: true},
	{in: "2000000/1s", bad: true},
}

func TestParseLimit(t *testing.T) {
	for _, tc := range limitStrings {
		got, err := quire.ParseLimit(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseLimit(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseLimit(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if again, err := quire.ParseLimit(got.String()); err != nil || again != got {
			t.Errorf("ParseLimit(%q.String() = %q) = %v, %v", tc.in, got.String(), again, err)
		}
	}
}
