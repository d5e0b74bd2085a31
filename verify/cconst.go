package verify

import (
	"fmt"
	"strconv"
)

// checkConstants checks the bytes of every constant image the module
// gives (a cold arena's, a staged arena's source) against the model's
// constants at the plan's offsets, zeros between: as the initializer in
// <prefix>.c, or a binary file #embed or the assembler stub includes.
func (cm *cModule) checkConstants() {
	var stub map[string]stubEntry
	if cm.mod.Stub != nil {
		var banner cLine
		stub, banner = parseStub(cm.mod.Stub)
		name := cm.p + ".constants.S"
		switch {
		case banner.line == 0:
			cm.r.add(CMismatch, "%s: no opening comment naming the plan hash", name)
		case banner.value != cm.doc.planHash:
			cm.r.add(CMismatch, "%s:%d: made for plan hash %s, but plan.json's plan_hash is %s", name, banner.line, banner.value, cm.doc.planHash)
		}
	}
	for _, a := range cm.arenas {
		if a.role != roleConstant {
			continue
		}
		sym, section := cm.symOf[a.id], cm.section(a.memory, cold(a))
		if a.staged() {
			sym, section = sym+"_source", cm.section(*a.source, false)
		}
		want, owner := cm.image(a)
		file := cm.p + "." + a.name + ".bin"
		if stub != nil {
			cm.checkStub(stub, sym, a, file, section, want, owner)
			continue
		}
		d, ok := cm.c.arrays[sym]
		switch {
		case !ok || !d.init:
			continue // checkArenas reported it
		case d.embed != "":
			if d.embed != file {
				cm.r.add(CMismatch, "%s:%d: %s embeds %s, want %s", cm.c.name, d.line, sym, d.embed, file)
				continue
			}
			cm.compare(file, sym, a, cm.blob(file), want, owner)
		case d.bad.line != 0:
			cm.r.add(CMismatch, "%s:%d: the initializer of %s holds %q, not bytes", cm.c.name, d.bad.line, sym, d.bad.value)
		default:
			cm.compare(cm.c.name, sym, a, d.data, want, owner)
		}
	}
}

// section is the section a constant image in bank name lies in: the bank's
// init section for a cold arena in a boot_init bank, else its section;
// the assembler's default when that is "".
func (cm *cModule) section(name string, cold bool) string {
	for _, b := range cm.doc.platform.banks {
		if b.name != name {
			continue
		}
		s := b.section
		if _, ok := cm.init[name]; ok && cold {
			s = b.initSection
		}
		if s == "" {
			s = ".rodata"
			if b.writable {
				s = ".data"
			}
		}
		return s
	}
	return ""
}

// checkStub checks the stub's definition of constant image sym.
func (cm *cModule) checkStub(stub map[string]stubEntry, sym string, a arenaRec, file, section string, want []byte, owner []int) {
	name := cm.p + ".constants.S"
	e, ok := stub[sym]
	switch {
	case !ok:
		cm.r.add(CMismatch, "%s: %s (%s) is not defined", name, sym, a.path)
		return
	case e.file != file:
		cm.r.add(CMismatch, "%s:%d: %s includes %s, want %s", name, e.line, sym, e.file, file)
		return
	case e.align != strconv.FormatInt(a.alignment, 10):
		cm.r.add(CMismatch, "%s:%d: %s is aligned to %s, but %s.alignment is %d", name, e.line, sym, e.align, a.path, a.alignment)
	case e.size != strconv.FormatInt(a.size, 10):
		cm.r.add(CMismatch, "%s:%d: %s has size %s, but %s.size is %d", name, e.line, sym, e.size, a.path, a.size)
	case e.section != section:
		cm.r.add(CMismatch, "%s:%d: %s is in section %s, but its bank places it in %s", name, e.line, sym, e.section, section)
	}
	cm.compare(file, sym, a, cm.blob(file), want, owner)
}

// blob returns the binary file name of the module, or nil.
func (cm *cModule) blob(name string) []byte {
	b, ok := cm.mod.Blobs[name]
	if !ok {
		cm.r.add(CMismatch, "%s: no binary file %s beside the module", cm.c.name, name)
		return nil
	}
	return b
}

// image returns the bytes constant arena a must hold: each of its
// tensor_allocs entries' model data at its offset, zeros between; and,
// for each byte, the index of the entry that covers it (-1 for padding).
func (cm *cModule) image(a arenaRec) ([]byte, []int) {
	img := make([]byte, a.size)
	owner := make([]int, a.size)
	for i := range owner {
		owner[i] = -1
	}
	for i, al := range cm.doc.allocs {
		t := cm.modelTensor(al.ref)
		if al.arena != a.id || t == nil || t.Buffer <= 0 || int(t.Buffer) >= len(cm.m.Buffers) {
			continue
		}
		data := cm.m.Buffers[t.Buffer].Data
		if int64(len(data)) != al.size || al.offset < 0 || al.offset+al.size > a.size {
			continue // Plan reports it
		}
		copy(img[al.offset:], data)
		for k := al.offset; k < al.offset+al.size; k++ {
			owner[k] = i
		}
	}
	return img, owner
}

// compare reports where got, the image of sym read from file, differs
// from want.
func (cm *cModule) compare(file, sym string, a arenaRec, got, want []byte, owner []int) {
	if got == nil {
		return
	}
	if len(got) != len(want) {
		cm.r.add(CMismatch, "%s: %s holds %d bytes, but %s.size is %d", file, sym, len(got), a.path, len(want))
		return
	}
	for k := range want {
		if got[k] == want[k] {
			continue
		}
		what := "padding, which must be 0"
		if i := owner[k]; i >= 0 {
			al := cm.doc.allocs[i]
			what = fmt.Sprintf("byte %d of tensor %v (%s)", int64(k)-al.offset, al.ref, al.path)
		}
		cm.r.add(CMismatch, "%s: byte %d of %s is 0x%02x, but the model gives 0x%02x: %s", file, k, sym, got[k], want[k], what)
		return
	}
}
