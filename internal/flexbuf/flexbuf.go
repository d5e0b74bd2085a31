// Package flexbuf reads and writes the FlexBuffers maps custom operators
// keep their options in (a TFLite operator's custom_options): the subset
// TFLM's kernels read, scalar values in a root map. The format is
// FlexBuffers' (google/flatbuffers, docs/source/flexbuffers.md): the root
// is at the end (its byte width, its packed type, its value before them),
// a map is a vector of values preceded by its keys vector's offset, the
// keys' byte width and its length, and followed by a packed type per
// value, keys sorted bytewise.
package flexbuf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
)

// FlexBuffers value types (flexbuffers.h Type) this package reads.
const (
	typeNull        = 0
	typeInt         = 1
	typeUint        = 2
	typeFloat       = 3
	typeIndirectInt = 6
	typeIndirectU   = 7
	typeIndirectF   = 8
	typeMap         = 9
	typeBool        = 26
)

// Map is a FlexBuffers map read from a buffer.
type Map struct {
	b     []byte
	pos   int // first value
	width int // byte width of its values
	n     int
	keys  []string
}

// Value is one scalar of a map.
type Value struct {
	typ  int
	i    int64
	u    uint64
	f    float64
	null bool
}

// ErrNoMap is returned for a buffer whose root is not a map.
var ErrNoMap = errors.New("flexbuf: root is not a map")

func readUint(b []byte, pos, w int) (uint64, error) {
	if pos < 0 || pos+w > len(b) {
		return 0, fmt.Errorf("flexbuf: read of %d bytes at %d outside %d-byte buffer", w, pos, len(b))
	}
	switch w {
	case 1:
		return uint64(b[pos]), nil
	case 2:
		return uint64(binary.LittleEndian.Uint16(b[pos:])), nil
	case 4:
		return uint64(binary.LittleEndian.Uint32(b[pos:])), nil
	case 8:
		return binary.LittleEndian.Uint64(b[pos:]), nil
	}
	return 0, fmt.Errorf("flexbuf: byte width %d", w)
}

func readInt(b []byte, pos, w int) (int64, error) {
	u, err := readUint(b, pos, w)
	if err != nil {
		return 0, err
	}
	shift := 64 - 8*uint(w)
	return int64(u<<shift) >> shift, nil
}

func readFloat(b []byte, pos, w int) (float64, error) {
	u, err := readUint(b, pos, w)
	if err != nil {
		return 0, err
	}
	switch w {
	case 4:
		return float64(math.Float32frombits(uint32(u))), nil
	case 8:
		return math.Float64frombits(u), nil
	}
	return 0, fmt.Errorf("flexbuf: float of %d bytes", w)
}

// indirect follows the offset stored at pos (width w) back to its target.
func indirect(b []byte, pos, w int) (int, error) {
	off, err := readUint(b, pos, w)
	if err != nil {
		return 0, err
	}
	if off > uint64(pos) {
		return 0, fmt.Errorf("flexbuf: offset %d at %d points before the buffer", off, pos)
	}
	return pos - int(off), nil
}

// ReadMap reads the root map of b.
func ReadMap(b []byte) (Map, error) {
	if len(b) < 3 {
		return Map{}, fmt.Errorf("flexbuf: %d-byte buffer", len(b))
	}
	rootWidth := int(b[len(b)-1])
	packed := int(b[len(b)-2])
	if packed>>2 != typeMap {
		return Map{}, ErrNoMap
	}
	pos, err := indirect(b, len(b)-2-rootWidth, rootWidth)
	if err != nil {
		return Map{}, err
	}
	m := Map{b: b, pos: pos, width: 1 << (packed & 3)}
	n, err := readUint(b, pos-m.width, m.width)
	if err != nil {
		return Map{}, err
	}
	if n > uint64(len(b)) {
		return Map{}, fmt.Errorf("flexbuf: map of %d values in %d bytes", n, len(b))
	}
	m.n = int(n)
	if pos+m.n*m.width+m.n > len(b) {
		return Map{}, fmt.Errorf("flexbuf: map of %d values overruns the buffer", m.n)
	}
	keysAt := pos - 3*m.width
	keys, err := indirect(b, keysAt, m.width)
	if err != nil {
		return Map{}, err
	}
	kw, err := readUint(b, keysAt+m.width, m.width)
	if err != nil {
		return Map{}, err
	}
	for i := 0; i < m.n; i++ {
		at, err := indirect(b, keys+i*int(kw), int(kw))
		if err != nil {
			return Map{}, err
		}
		end := at
		for end < len(b) && b[end] != 0 {
			end++
		}
		if end == len(b) {
			return Map{}, fmt.Errorf("flexbuf: key %d is not terminated", i)
		}
		m.keys = append(m.keys, string(b[at:end]))
	}
	return m, nil
}

// Len is the number of values.
func (m Map) Len() int { return m.n }

// At returns value i, in key order (FlexbufferWrapper's ElementAs*
// index), or an error for one out of range or not a scalar.
func (m Map) At(i int) (Value, error) {
	if i < 0 || i >= m.n {
		return Value{}, fmt.Errorf("flexbuf: value %d of %d", i, m.n)
	}
	pos := m.pos + i*m.width
	packed := int(m.b[m.pos+m.n*m.width+i])
	v := Value{typ: packed >> 2}
	own := 1 << (packed & 3)
	var err error
	switch v.typ {
	case typeNull:
		v.null = true
	case typeInt:
		v.i, err = readInt(m.b, pos, m.width)
		v.u, v.f = uint64(v.i), float64(v.i)
	case typeUint, typeBool:
		v.u, err = readUint(m.b, pos, m.width)
		v.i, v.f = int64(v.u), float64(v.u)
	case typeFloat:
		v.f, err = readFloat(m.b, pos, m.width)
		v.i, v.u = int64(v.f), uint64(v.f)
	case typeIndirectInt, typeIndirectU, typeIndirectF:
		var at int
		if at, err = indirect(m.b, pos, m.width); err == nil {
			switch v.typ {
			case typeIndirectInt:
				v.i, err = readInt(m.b, at, own)
				v.u, v.f = uint64(v.i), float64(v.i)
			case typeIndirectU:
				v.u, err = readUint(m.b, at, own)
				v.i, v.f = int64(v.u), float64(v.u)
			default:
				v.f, err = readFloat(m.b, at, own)
				v.i, v.u = int64(v.f), uint64(v.f)
			}
		}
	default:
		return Value{}, fmt.Errorf("flexbuf: value %d (%q) has type %d, not a scalar", i, m.keys[i], v.typ)
	}
	return v, err
}

// Get returns the value of key; ok is false when the map has no such key.
func (m Map) Get(key string) (v Value, ok bool, err error) {
	i := sort.SearchStrings(m.keys, key)
	if i == len(m.keys) || m.keys[i] != key {
		return Value{null: true}, false, nil
	}
	v, err = m.At(i)
	return v, err == nil, err
}

// Int is the value as an integer (a float truncated).
func (v Value) Int() int64 { return v.i }

// Float is the value as a float.
func (v Value) Float() float64 { return v.f }

// Bool is the value as a bool: nonzero.
func (v Value) Bool() bool { return v.u != 0 || v.f != 0 }

// IsNull says the value is FlexBuffers' null or absent.
func (v Value) IsNull() bool { return v.null }

// Entry is one key of a map to encode; Value is an int, int32, int64,
// bool, float32 or float64.
type Entry struct {
	Key   string
	Value any
}

// EncodeMap returns a FlexBuffers buffer holding a root map of entries,
// every value inline and 4 bytes wide (ints must fit in int32), keys
// sorted as FlexBuffers requires. It is for building test models.
func EncodeMap(entries []Entry) ([]byte, error) {
	es := append([]Entry(nil), entries...)
	sort.Slice(es, func(i, j int) bool { return es[i].Key < es[j].Key })
	const w = 4
	var b []byte
	put := func(v uint64) { b = binary.LittleEndian.AppendUint32(b, uint32(v)) }
	keyAt := make([]int, len(es))
	for i, e := range es {
		if i > 0 && es[i-1].Key == e.Key {
			return nil, fmt.Errorf("flexbuf: key %q twice", e.Key)
		}
		keyAt[i] = len(b)
		b = append(append(b, e.Key...), 0)
	}
	for len(b)%w != 0 {
		b = append(b, 0)
	}
	put(uint64(len(es)))
	keys := len(b)
	for i := range es {
		put(uint64(len(b) - keyAt[i]))
	}
	// The map: keys offset, keys width, length, values, types.
	put(uint64(len(b) - keys))
	put(w)
	put(uint64(len(es)))
	vals := len(b)
	types := make([]byte, len(es))
	for i, e := range es {
		const width32 = 2
		switch v := e.Value.(type) {
		case int:
			if v != int(int32(v)) {
				return nil, fmt.Errorf("flexbuf: %q = %d does not fit in 4 bytes", e.Key, v)
			}
			put(uint64(uint32(int32(v))))
			types[i] = typeInt<<2 | width32
		case int32:
			put(uint64(uint32(v)))
			types[i] = typeInt<<2 | width32
		case int64:
			if v != int64(int32(v)) {
				return nil, fmt.Errorf("flexbuf: %q = %d does not fit in 4 bytes", e.Key, v)
			}
			put(uint64(uint32(int32(v))))
			types[i] = typeInt<<2 | width32
		case bool:
			var u uint64
			if v {
				u = 1
			}
			put(u)
			types[i] = typeBool<<2 | width32
		case float32:
			put(uint64(math.Float32bits(v)))
			types[i] = typeFloat<<2 | width32
		case float64:
			put(uint64(math.Float32bits(float32(v))))
			types[i] = typeFloat<<2 | width32
		default:
			return nil, fmt.Errorf("flexbuf: %q: value of type %T", e.Key, e.Value)
		}
	}
	b = append(b, types...)
	// The root: an offset to the map, its packed type, its width.
	root := len(b)
	if root-vals > 255 {
		return nil, errors.New("flexbuf: map too large for a 1-byte root offset")
	}
	return append(b, byte(root-vals), typeMap<<2|2, 1), nil
}
