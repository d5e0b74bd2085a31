package dsa

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzReadCSV feeds mutated MiniMalloc CSVs to ReadCSV, which must never
// panic. What it accepts goes to Greedy and, when small, Best: each returns
// a valid placement or an error (ErrInfeasible for pinned buffers that
// collide), never a panic.
func FuzzReadCSV(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.csv"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("id,lower,upper,size\n0,0,1,16\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, _, err := ReadCSV(bytes.NewReader(data))
		if err != nil || len(p.Buffers) > 64 {
			return
		}
		for name, s := range map[string]Strategy{"greedy": Greedy, "best": Best} {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			sol, err := s(ctx, p)
			cancel()
			if err != nil {
				if !errors.Is(err, ErrInfeasible) && Validate(p) == nil {
					t.Fatalf("%s: valid problem failed: %v", name, err)
				}
				continue
			}
			if v := violations(p, sol); len(v) > 0 {
				t.Fatalf("%s: %v", name, v)
			}
		}
	})
}
