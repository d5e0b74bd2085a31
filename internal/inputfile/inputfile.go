// Package inputfile reads the files heliac takes as input: models, plans,
// config and platform files and pack's CSV problems.
//
// Input: a path and the Kind of file expected. Output: the file's bytes, or
// an error naming the path and the cause. It reads regular files only, so a
// FIFO, a device such as /dev/zero or a directory is refused before a byte
// is read, and refuses a file over its kind's maximum before reading it,
// so no input hangs heliac or runs it out of memory. It imports no heliac
// package.
package inputfile

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
)

// Kind names a kind of input file and the most bytes heliac reads of one.
type Kind struct {
	Name string // what the file is, for messages: "model"
	Max  int64  // the largest file accepted, in bytes
}

// The kinds of input and their maximum sizes. A model may be up to 256 MiB:
// 64 times the corpus's largest model (4 MB) and beyond what
// microcontrollers hold in flash, while the C source heliac writes (about
// 4.5 bytes of text per byte of weights) still fits in memory.
// TFLite's flatbuffer form ends at 2 GiB, and larger models keep their
// weights outside it (the offset/size form); both forms are read up to this
// size. A plan may be as large as a model; configs and platforms are written
// by hand.
var (
	Model    = Kind{Name: "model", Max: 256 << 20}
	Plan     = Kind{Name: "plan", Max: 256 << 20}
	Config   = Kind{Name: "config file", Max: 1 << 20}
	Platform = Kind{Name: "platform file", Max: 1 << 20}
	CSV      = Kind{Name: "CSV problem", Max: 64 << 20}
	// CSource is a C file heliac wrote: the source spells every weight
	// out as text, about 4.5 bytes per byte of a model of at most
	// Model.Max.
	CSource = Kind{Name: "C source", Max: 5 * (256 << 20)}
	// Constants is a binary file of a constant arena's bytes that heliac
	// wrote beside its C module (--constants incbin or embed): at most a
	// model's bytes.
	Constants = Kind{Name: "constants file", Max: 256 << 20}
)

// Read returns the contents of the regular file at path. It refuses any
// other kind of file and a file over k.Max bytes.
func Read(path string, k Kind) ([]byte, error) {
	return read(path, k, k.Max, true)
}

// Head returns the first n bytes of the regular file at path, or all of it
// when it is shorter. It refuses any other kind of file; k.Max is not
// checked, as only n bytes are read.
func Head(path string, k Kind, n int64) ([]byte, error) {
	return read(path, k, n, false)
}

// read reads at most n bytes of path; whole says the file must not be
// longer.
func read(path string, k Kind, n int64, whole bool) ([]byte, error) {
	if !whole {
		k.Max = math.MaxInt64
	}
	// Stat first: opening a FIFO blocks until a writer comes.
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := check(path, st, k); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Stat again: the path may name another file by now.
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := check(path, st, k); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(int(min(st.Size(), n)) + bytes.MinRead)
	limit := n
	if whole {
		limit++ // one byte more shows a file that grew past k.Max
	}
	if _, err := buf.ReadFrom(io.LimitReader(f, limit)); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(buf.Len()) > n {
		return nil, tooLarge(path, k)
	}
	return buf.Bytes(), nil
}

// check returns an error when st is not a regular file of at most k.Max
// bytes.
func check(path string, st os.FileInfo, k Kind) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("read %s: %s, not a regular file; give the %s as a file", path, TypeName(st.Mode()), k.Name)
	}
	if st.Size() > k.Max {
		return tooLarge(path, k)
	}
	return nil
}

// tooLarge reports a file over k's maximum.
func tooLarge(path string, k Kind) error {
	limit := fmt.Sprintf("%d bytes", k.Max)
	if k.Max%(1<<20) == 0 {
		limit = fmt.Sprintf("%d MiB", k.Max>>20)
	}
	return fmt.Errorf("read %s: larger than %s, the most heliac reads of a %s", path, limit, k.Name)
}

// TypeName says what kind of file m is ("a FIFO", "a directory", ...),
// as heliac's messages name it.
func TypeName(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a file of type " + m.Type().String()
}
