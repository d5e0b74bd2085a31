package driver

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/inputfile"
	"github.com/heliac/heliac/verify"
)

// verifySetC checks the C module of a plan's set (FindSet) against the plan
// and model m (verify.C), with the binary files of constants its stub or
// source includes. A plan without its C files (shipped alone, or named
// plan.json as before sets) is not an error; a file that cannot be read is.
func verifySetC(s Set, m *graph.Model, planJSON []byte) ([]verify.Violation, error) {
	if s.Header == "" || s.Source == "" {
		return nil, nil
	}
	var mod verify.Module
	var err error
	if mod.Header, err = inputfile.Read(s.Header, inputfile.CSource); err != nil {
		return nil, err
	}
	if mod.Source, err = inputfile.Read(s.Source, inputfile.CSource); err != nil {
		return nil, err
	}
	if s.Stub != "" {
		if mod.Stub, err = inputfile.Read(s.Stub, inputfile.CSource); err != nil {
			return nil, err
		}
	}
	dir := filepath.Dir(s.Source)
	for _, name := range blobRefs(mod.Stub, mod.Source) {
		path := filepath.Join(dir, name)
		if _, err := os.Lstat(path); err != nil {
			continue // verify.C reports the missing file
		}
		data, err := inputfile.Read(path, inputfile.Constants)
		if err != nil {
			return nil, err
		}
		if mod.Blobs == nil {
			mod.Blobs = map[string][]byte{}
		}
		mod.Blobs[name] = data
	}
	return verify.C(m, planJSON, mod), nil
}

// blobRe finds the binary files of constants a stub (.incbin) or a source
// (#embed) includes: base names, as heliac writes them.
var blobRe = regexp.MustCompile(`(?m)^\s*(?:\.incbin|#embed) "([^"/\\]+\.bin)"\s*$`)

// blobRefs returns the binary files stub and source include, in order.
// blobRe runs only on lines that name a .bin file: a source of megabytes
// has a handful.
func blobRefs(stub, source []byte) []string {
	var out []string
	for _, data := range [][]byte{stub, source} {
		for len(data) > 0 {
			line := data
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				line, data = data[:i], data[i+1:]
			} else {
				data = nil
			}
			if !bytes.Contains(line, []byte(`.bin"`)) {
				continue
			}
			if m := blobRe.FindSubmatch(line); m != nil {
				out = append(out, string(m[1]))
			}
		}
	}
	return out
}

// cModule is the C module of files, as emit.C returns them: the header,
// the source, then the assembler stub and binary files of constants.
func cModule(files emit.Files) verify.Module {
	mod := verify.Module{Header: files[0].Data, Source: files[1].Data}
	for _, f := range files[2:] {
		switch {
		case strings.HasSuffix(f.Name, StubSuffix):
			mod.Stub = f.Data
		case strings.HasSuffix(f.Name, ".bin"):
			if mod.Blobs == nil {
				mod.Blobs = map[string][]byte{}
			}
			mod.Blobs[f.Name] = f.Data
		}
	}
	return mod
}
