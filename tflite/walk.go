package tflite

import (
	"fmt"
)

// The loader (load.go) checks the fields it reads. The object API that
// SetMetadata and Repack use (UnPack) reads every field of every table the
// schema knows: options of every operator, sparsity, custom quantization,
// signature defs, external buffers. walkModel checks all of them, by the
// description of schema.fbs in fbs.go, with the same checker and the same
// work budget as the loader, so that UnPack never reads outside the file.
//
// In strict mode it also refuses what the object API would silently drop:
// a field the schema does not know (a file from a newer schema) and a union
// value whose type the schema does not know. Deprecated fields, which the
// bindings have no accessor for and no reader sees, are checked but not
// refused.

// walkModel checks the whole flatbuffer in data from its root table.
// The file identifier and root offset have been checked by load.
func walkModel(data []byte, strict bool) error {
	_, err := walkModelEnd(data, strict)
	return err
}

// walkModelEnd is walkModel that also returns where the flatbuffer's
// content ends: the end of the last byte of a table, vtable, vector or
// string the model reaches from its root, or of the file identifier. What
// follows is padding, data in the offset/size form, or bytes appended to
// the file.
func walkModelEnd(data []byte, strict bool) (int64, error) {
	s := tfliteSchema()
	w := &walker{c: newChecker(data), s: s, strict: strict}
	w.c.saw(0, 8) // the root offset and the file identifier
	root := int64(uint32(w.c.u32(0)))
	if err := w.table(root, rootPath, s.tables[s.root]); err != nil {
		return 0, err
	}
	return w.c.end, nil
}

type walker struct {
	c      checker
	s      *fbsSchema
	strict bool
	// visit, when set (by tests), is called for every present field.
	visit func(table *fbsTableDef, f *fbsField)
}

// table checks the table of type t at pos and, recursively, everything
// it references.
func (w *walker) table(pos int64, path string, t *fbsTableDef) error {
	c := &w.c
	vtable, vtSize, err := c.vtable(pos, path)
	if err != nil {
		return err
	}
	for slot := int64(0); 4+2*slot+2 <= vtSize; slot++ {
		rel := int64(c.u16(vtable + 4 + 2*slot))
		if rel == 0 {
			continue
		}
		if slot >= int64(len(t.bySlot)) {
			if w.strict {
				return corrupt(path, vtable+4+2*slot, "field %d is unknown to the schema (revision 3d); rewriting the model would drop it", slot)
			}
			continue
		}
		f := t.bySlot[slot]
		if f == nil {
			// A union's type byte (the union's value takes the next slot).
			if !c.inside(pos+rel, 1) {
				return corrupt(fieldPath(path, t.bySlot[slot+1].name+"_type"), pos+rel, "1-byte field runs past the end of the file (size %d)", len(c.buf))
			}
			c.saw(pos+rel, 1)
			continue
		}
		if w.visit != nil {
			w.visit(t, f)
		}
		if err := w.field(pos, pos+rel, fieldPath(path, f.name), f); err != nil {
			return err
		}
	}
	return nil
}

// field checks one present field of the table at tab, stored at pos.
func (w *walker) field(tab, pos int64, path string, f *fbsField) error {
	c := &w.c
	if f.typ.kind == fbsScalar {
		if !c.inside(pos, f.typ.size) {
			return corrupt(path, pos, "%d-byte field runs past the end of the file (size %d)", f.typ.size, len(c.buf))
		}
		c.saw(pos, f.typ.size)
		return nil
	}
	target, err := w.offset(pos, path)
	if err != nil {
		return err
	}
	switch f.typ.kind {
	case fbsString:
		return c.vector(target, path, 1, 1)
	case fbsTable:
		return w.table(target, path, w.s.tables[f.typ.name])
	case fbsUnion:
		return w.union(tab, target, path, f)
	}
	return w.vector(target, path, f.typ.elem)
}

// offset reads the uoffset at pos and returns its target.
func (w *walker) offset(pos int64, path string) (int64, error) {
	c := &w.c
	if !c.inside(pos, 4) {
		return 0, corrupt(path, pos, "offset field runs past the end of the file (size %d)", len(c.buf))
	}
	c.saw(pos, 4)
	target := pos + int64(c.u32(pos))
	if !c.reachable(target) {
		return 0, corrupt(path, pos, "offset to %d outside the file (size %d)", target, len(c.buf))
	}
	return target, nil
}

// union checks a union value at target, of the type its type byte in the
// table at tab names. A NONE type leaves the value unread, as UnPack does.
func (w *walker) union(tab, target int64, path string, f *fbsField) error {
	c := &w.c
	u := w.s.unions[f.typ.name]
	typ := int64(0)
	vtable := tab - int64(int32(c.u32(tab)))
	if vtSize := int64(c.u16(vtable)); int64(f.typeVT)+2 <= vtSize {
		if rel := int64(c.u16(vtable + int64(f.typeVT))); rel != 0 {
			typ = int64(c.buf[tab+rel]) // checked by table
		}
	}
	if typ == 0 {
		return nil
	}
	if typ >= int64(len(u.members)) {
		if w.strict {
			return corrupt(path, -1, "%s type %d is unknown to the schema (revision 3d); rewriting the model would drop it", u.name, typ)
		}
		return nil
	}
	return w.table(target, path, w.s.tables[u.members[typ]])
}

// vector checks the vector at pos with elements of type elem.
func (w *walker) vector(pos int64, path string, elem *fbsType) error {
	c := &w.c
	if elem.kind == fbsScalar {
		return c.vector(pos, path, elem.size, 0)
	}
	if err := c.vector(pos, path, 4, 0); err != nil {
		return err
	}
	n := int64(c.u32(pos))
	for j := int64(0); j < n; j++ {
		ep := fmt.Sprintf("%s[%d]", path, j)
		target, err := w.offset(pos+4+4*j, ep)
		if err != nil {
			return err
		}
		if elem.kind == fbsString {
			err = c.vector(target, ep, 1, 1)
		} else {
			err = w.table(target, ep, w.s.tables[elem.name])
		}
		if err != nil {
			return err
		}
	}
	return nil
}
