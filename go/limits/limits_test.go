package limits

import (
	"math"
	"testing"

	"github.com/strata-db/strata/go/errkind"
)

// TestBoundsFitTheFormatsThatStoreThem prevents a bound from being raised
// past what the file format holds (the bug of ef_construction 2^32, stored
// as 0) or past what a search can honour (ef is widened to k).
func TestBoundsFitTheFormatsThatStoreThem(t *testing.T) {
	if MaxEfConstruction > math.MaxUint32 || MaxDim > math.MaxUint32 || MaxM > math.MaxUint32 {
		t.Error("a bound exceeds the uint32 field of the index file")
	}
	if MaxStringIDBytes > math.MaxUint16 {
		t.Error("MaxStringIDBytes exceeds the uint16 length of a string id in the log")
	}
	if MaxEf < MaxK {
		t.Errorf("MaxEf %d < MaxK %d: a search widens ef to k", MaxEf, MaxK)
	}
}

func TestChecksNameTheParameterAndTheRange(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{CheckDim(0), "dim must be in [1, 65536], got 0"},
		{CheckM(257), "M must be in [2, 256], got 257"},
		{CheckEfConstruction(1 << 32), "ef_construction must be in [1, 1048576], got 4294967296"},
		{CheckK(0), "k must be in [1, 1048576], got 0"},
		{CheckEf(-1), "ef must be in [0, 1048576], got -1"},
		{CheckScan(-1), "limit must be in [0, 4294967295], got -1"},
		{CheckSparseNonZeros(MaxSparseNonZeros + 1), "sparse vector non-zeros must be in [0, 32768], got 32769"},
		{CheckIntID(1 << 63), "id 9223372036854775808 exceeds the largest integer id 9223372036854775807"},
		{CheckStringID(""), "string id must be 1 to 512 bytes, got 0"},
		{CheckStringID(string(make([]byte, 513))), "string id must be 1 to 512 bytes, got 513"},
		{CheckStringID("a\xffb"), `string id "a\xffb" is not valid UTF-8`},
	} {
		if c.err == nil || c.err.Error() != c.want || errkind.Of(c.err) != errkind.Invalid {
			t.Errorf("got %v, want %q (invalid argument)", c.err, c.want)
		}
	}
	for _, err := range []error{CheckDim(MaxDim), CheckM(MinM), CheckEfConstruction(MaxEfConstruction),
		CheckK(MaxK), CheckEf(0), CheckEf(MaxEf), CheckScan(0), CheckSparseNonZeros(0), CheckSparseNonZeros(MaxSparseNonZeros),
		CheckIntID(MaxIntID), CheckIntID(0),
		CheckStringID("é"), CheckStringID(string(make([]byte, MaxStringIDBytes)))} {
		if err != nil {
			t.Errorf("a bound itself is refused: %v", err)
		}
	}
}
