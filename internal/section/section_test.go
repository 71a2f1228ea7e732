package section

import "testing"

func TestCompare(t *testing.T) {
	tests := []struct {
		a, b string
		sign int
	}{
		{"12.2", "12.10", -1},
		{"12.10", "12.2", 1},
		{"12.3", "12.3", 0},
		{"12", "12.1", -1},
		{"12.a", "12.b", -1},
		{"11.9", "12.1", -1},
	}
	for _, tt := range tests {
		got := Compare(tt.a, tt.b)
		if (got < 0 && tt.sign >= 0) || (got > 0 && tt.sign <= 0) || (got == 0 && tt.sign != 0) {
			t.Errorf("Compare(%q, %q) = %d, want sign %d", tt.a, tt.b, got, tt.sign)
		}
	}
}
