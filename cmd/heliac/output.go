package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/heliac/heliac/emit"
)

// How heliac writes a set of files into a directory (writeSet):
//
//  1. It removes what a killed run of the same set left behind: files named
//     .<name>.heliac-<digits> for a name of the set (temporary files and
//     moved-aside old files), and .<name>.<digits> as heliac named its
//     temporary files before. Nothing else in the directory is touched.
//  2. It writes every file to a temporary name, .<name>.heliac-<digits>,
//     and syncs it.
//  3. It moves aside the files of an earlier run that the set no longer
//     has (the stub and binary files of constants of another --constants,
//     driver.Obsolete). Then, in the set's order, it moves each old file
//     aside and renames the new one into place. The set's last file (the
//     plan file) completes it.
//  4. If a step fails, it renames the old files back, removes the new ones
//     and its temporary files, and returns the error: the previous set is
//     left as it was. When all went well it removes the old files.
//
// A run killed during step 3, which takes a few renames, can leave files of
// two runs side by side; `heliac verify DIR` sees it (the C files carry the
// plan's hash) and the next run writes the set whole.

// rename is os.Rename; tests make it fail.
var rename = os.Rename

// tempMark sits between a file's name and the digits os.CreateTemp adds in
// the names of heliac's temporary files.
const tempMark = ".heliac-"

// writeSet writes files into dir, creating it if needed, as one set (see
// above), and removes obsolete, names of files in dir the set replaces
// with none. input, when not "", is a file that must survive whatever its
// name.
func writeSet(dir string, files emit.Files, obsolete []string, input string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	removeStale(dir, files, input)
	moves, err := stage(dir, files)
	var gone []move
	for _, name := range obsolete {
		gone = append(gone, move{target: filepath.Join(dir, name)})
	}
	moves = append(gone, moves...)
	defer func() {
		for _, m := range moves {
			if m.tmp != "" {
				os.Remove(m.tmp) // gone once renamed into place
			}
		}
	}()
	if err != nil {
		return err
	}
	if err := commit(moves); err != nil {
		return err
	}
	for _, m := range moves {
		if m.old != "" {
			os.Remove(m.old)
		}
	}
	return nil
}

// move is one file of a set on its way into place.
type move struct {
	tmp    string // the new contents, under a temporary name
	target string // where they go
	old    string // where the file that was at target went; "" for none
}

// stage writes every file to a temporary file in dir.
func stage(dir string, files emit.Files) ([]move, error) {
	var moves []move
	for _, f := range files {
		tmp, err := os.CreateTemp(dir, "."+f.Name+tempMark+"*")
		if err != nil {
			return moves, err
		}
		moves = append(moves, move{tmp: tmp.Name(), target: filepath.Join(dir, f.Name)})
		_, err = tmp.Write(f.Data)
		if err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(tmp.Name(), 0o644)
		}
		if err != nil {
			return moves, err
		}
	}
	return moves, nil
}

// commit puts every staged file in place, in order. When a step fails it
// puts back what it moved, so the files that were there stay, and returns
// the error.
func commit(moves []move) (err error) {
	done := 0 // moves[:done] may have changed the directory
	defer func() {
		if err == nil {
			return
		}
		if uerr := undo(moves[:done]); uerr != nil {
			err = fmt.Errorf("%w; putting the previous files back failed too: %w", err, uerr)
		}
	}()
	for i := range moves {
		if err := moveAside(&moves[i]); err != nil {
			return err
		}
		done = i + 1
		if moves[i].tmp == "" {
			continue // an obsolete file: moved aside, none in its place
		}
		if err := rename(moves[i].tmp, moves[i].target); err != nil {
			return err
		}
	}
	return nil
}

// moveAside renames the file at m.target, if any, to a temporary name of its
// own and records it in m.old.
func moveAside(m *move) error {
	if _, err := os.Lstat(m.target); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(m.target), "."+filepath.Base(m.target)+tempMark+"*")
	if err != nil {
		return err
	}
	f.Close()
	if err := rename(m.target, f.Name()); err != nil {
		os.Remove(f.Name())
		return err
	}
	m.old = f.Name()
	return nil
}

// undo reverses moves, last first: each old file goes back to its place,
// and a new file where there was none is removed. An old file it cannot put
// back stays under its temporary name, which the error gives.
func undo(moves []move) error {
	var errs []error
	for i := len(moves) - 1; i >= 0; i-- {
		m := moves[i]
		if m.old != "" {
			if err := rename(m.old, m.target); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if _, err := os.Lstat(m.tmp); m.tmp != "" && errors.Is(err, os.ErrNotExist) {
			os.Remove(m.target) // the new file made it into place
		}
	}
	return errors.Join(errs...)
}

// removeStale removes the files a killed run of the set left in dir (step 1
// above), but never the input.
func removeStale(dir string, files emit.Files, input string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	in, _ := os.Stat(input)
	for _, e := range entries {
		if e.IsDir() || !isStale(e.Name(), files) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if st, err := os.Stat(path); err == nil && in != nil && os.SameFile(in, st) {
			continue
		}
		os.Remove(path)
	}
}

// isStale reports whether name is one of heliac's temporary names for a
// file of the set: .<name>.heliac-<digits>, or .<name>.<digits> as heliac
// named them before (when plan files were all plan.json).
func isStale(name string, files emit.Files) bool {
	rest, ok := strings.CutPrefix(name, ".")
	if !ok {
		return false
	}
	if i := strings.LastIndex(rest, tempMark); i >= 0 && digits(rest[i+len(tempMark):]) {
		return inSet(rest[:i], files, false)
	}
	if i := strings.LastIndexByte(rest, '.'); i >= 0 && digits(rest[i+1:]) {
		return inSet(rest[:i], files, true)
	}
	return false
}

// inSet reports whether base names a file of the set; legacy also counts
// plan.json, the one plan file name of earlier heliac versions.
func inSet(base string, files emit.Files, legacy bool) bool {
	if legacy && base == "plan.json" {
		return true
	}
	for _, f := range files {
		if f.Name == base {
			return true
		}
	}
	return false
}

// digits reports whether s is one or more decimal digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
