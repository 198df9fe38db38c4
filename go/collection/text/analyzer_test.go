package text

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func mustAnalyzer(t testing.TB, name string) Analyzer {
	t.Helper()
	a, err := ParseAnalyzer(name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestAnalyzerSegmentsByUnicodeCategoryNotASCII(t *testing.T) {
	a := mustAnalyzer(t, AnalyzerSimple)
	cases := []struct {
		in   string
		want []string
	}{
		{"Hello, World!", []string{"hello", "world"}},
		{"naïve café déjà-vu", []string{"naïve", "café", "déjà", "vu"}},
		{"Привет_мир ΣΊΣΥΦΟΣ", []string{"привет", "мир", "σίσυφοσ"}},
		{"北京大学 and ひらがな", []string{"北", "京", "大", "学", "and", "ひ", "ら", "が", "な"}},
		{"हिन्दी भाषा", []string{"हिन्दी", "भाषा"}}, // combining marks stay inside words
		{"x86_64 v2.0 ①②", []string{"x86", "64", "v2", "0", "①②"}},
		{"ǅemal KELVIN\u212A", []string{"ǆemal", "kelvink"}},
		{"emoji🙂split\xffbad", []string{"emoji", "split", "bad"}},
		{"", nil},
		{"  ...  ", nil},
	}
	for _, c := range cases {
		if got := a.Terms(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Terms(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAnalyzerFoldsFinalSigmaAndCaseOrbits(t *testing.T) {
	a := mustAnalyzer(t, AnalyzerSimple)
	if x, y := a.Terms("ΟΔΟΣ"), a.Terms("οδος"); !slices.Equal(x, y) {
		t.Fatalf("upper %q and lower with final sigma %q differ", x, y)
	}
	if x, y := a.Terms("οδος"), a.Terms("οδοσ"); !slices.Equal(x, y) {
		t.Fatalf("final sigma %q and sigma %q differ", x, y)
	}
}

func TestEnglishAnalyzerDropsStopWordsAndStems(t *testing.T) {
	got := mustAnalyzer(t, AnalyzerEnglish).Terms("The Databases are running in Go and caching queries")
	want := []string{"databas", "run", "go", "cach", "queri"}
	if !slices.Equal(got, want) {
		t.Fatalf("english: %q, want %q", got, want)
	}
	got = mustAnalyzer(t, AnalyzerStop).Terms("The Databases are running")
	if want := []string{"databases", "running"}; !slices.Equal(got, want) {
		t.Fatalf("stop: %q, want %q", got, want)
	}
	// Only ASCII-letter tokens are stemmed: other scripts pass through.
	got = mustAnalyzer(t, AnalyzerEnglish).Terms("cafés Häuser running2")
	if want := []string{"cafés", "häuser", "running2"}; !slices.Equal(got, want) {
		t.Fatalf("non-ASCII: %q, want %q", got, want)
	}
}

func TestAnalyzerDropsOverlongTokens(t *testing.T) {
	long := strings.Repeat("a", MaxTokenBytes+1)
	got := mustAnalyzer(t, AnalyzerSimple).Terms("ok " + long + " " + strings.Repeat("é", 200) + " fine")
	if want := []string{"ok", "fine"}; !slices.Equal(got, want) {
		t.Fatalf("got %d terms %q, want %q", len(got), got, want)
	}
	if got := mustAnalyzer(t, AnalyzerSimple).Terms(strings.Repeat("b", MaxTokenBytes)); len(got) != 1 {
		t.Fatalf("a token of exactly MaxTokenBytes was dropped")
	}
}

func TestParseAnalyzerRejectsUnknownNames(t *testing.T) {
	if _, err := ParseAnalyzer("klingon"); err == nil {
		t.Fatal("no error for an unknown analyzer")
	}
	if a := mustAnalyzer(t, ""); a.Name() != AnalyzerEnglish {
		t.Fatalf("default analyzer %q", a.Name())
	}
}

func FuzzAnalyzer(f *testing.F) {
	for _, s := range []string{"Hello, World", "naïve 北京 हिन्दी", "\xff\xfe", "ΣΊΣΥΦΟΣ x86_64", strings.Repeat("z", 300)} {
		f.Add(s)
	}
	analyzers := []Analyzer{mustAnalyzer(f, AnalyzerSimple), mustAnalyzer(f, AnalyzerEnglish)}
	f.Fuzz(func(t *testing.T, s string) {
		for _, a := range analyzers {
			for _, term := range a.Terms(s) {
				if term == "" || len(term) > MaxTokenBytes || !utf8.ValidString(term) {
					t.Fatalf("%s: bad term %q from %q", a.Name(), term, s)
				}
			}
		}
	})
}
