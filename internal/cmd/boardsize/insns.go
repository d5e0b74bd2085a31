package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// insnCount reads the one qemu_insns=N line that QEMU's plugin
// insn_count.so (../shared/tools/src/insn_count.c) writes at exit: the
// guest instructions of the whole run. The plugin appends to its file, so
// a second line means a file left from an earlier run: an error, as is
// none.
func insnCount(r io.Reader) (uint64, error) {
	var n uint64
	found := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "qemu_insns=")
		if !ok {
			continue
		}
		if found {
			return 0, fmt.Errorf("more than one qemu_insns= line (the plugin appends: remove the file before a run)")
		}
		var err error
		if n, err = strconv.ParseUint(v, 10, 64); err != nil {
			return 0, fmt.Errorf("qemu_insns=%s: %w", v, err)
		}
		found = true
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("no qemu_insns= line (did QEMU run with -plugin insn_count.so,out=FILE?)")
	}
	return n, nil
}

// insns is one program's instruction counts: the whole run with K
// invocations and with K+1, everything else the same.
type insns struct {
	K, K1 uint64 // N(K), N(K+1)
}

// PerInference is the instructions of one inference, N(K+1) - N(K): the
// start-up, the model's set-up and K inferences cancel out.
func (c insns) PerInference() (uint64, error) {
	if c.K1 <= c.K {
		return 0, fmt.Errorf("N(K+1) = %d is not above N(K) = %d: not runs of K and K+1 invocations of one program", c.K1, c.K)
	}
	return c.K1 - c.K, nil
}

// readInsns reads "FILE_K,FILE_K1", the plugin's files of the runs with K
// and K+1 invocations.
func readInsns(files string) (insns, error) {
	paths := strings.Split(files, ",")
	if len(paths) != 2 {
		return insns{}, fmt.Errorf("%q: want FILE_K,FILE_K1", files)
	}
	var n [2]uint64
	for i, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return insns{}, err
		}
		n[i], err = insnCount(f)
		f.Close()
		if err != nil {
			return insns{}, fmt.Errorf("%s: %w", p, err)
		}
	}
	return insns{K: n[0], K1: n[1]}, nil
}
