package frontier

// Value is a dynamic value as msgpack (and so Frontera) sees it. Its dynamic type is one of:
//
//	nil
//	bool
//	int64, uint64 (integers; codecs decode into int64 unless the value only fits uint64)
//	float64
//	string        msgpack str (a Python str)
//	[]byte        msgpack bin (a Python bytes)
//	[]Value       a list
//	Tuple         a tuple: a list on msgpack, ["tuple", …] in the JSON codec
//	Map           an ordered map
//
// Codecs reject other types with an error that names the type.
type Value = any

// Tuple is a Python tuple. It differs from []Value only in the JSON codec.
type Tuple []Value

// Entry is one key and value of a Map. Keys are Values too (Frontera uses both bin and str keys).
type Entry struct {
	Key   Value
	Value Value
}

// Map is an ordered map: the order of a Python dict is part of the bytes Frontera writes.
// Lookups are linear, which beats hashing for the handful of keys a meta map holds.
type Map []Entry

// keyEqual reports whether a map key (str or bin) spells name.
func keyEqual(k Value, name string) bool {
	switch k := k.(type) {
	case []byte:
		return string(k) == name
	case string:
		return k == name
	}
	return false
}

// Get returns the value stored under the str or bin key name.
func (m Map) Get(name string) (Value, bool) {
	for _, e := range m {
		if keyEqual(e.Key, name) {
			return e.Value, true
		}
	}
	return nil, false
}

// Set replaces the value under name in place, or appends it under a bin key (Frontera's meta keys are bin).
func (m *Map) Set(name string, v Value) {
	for i, e := range *m {
		if keyEqual(e.Key, name) {
			(*m)[i].Value = v
			return
		}
	}
	*m = append(*m, Entry{Key: []byte(name), Value: v})
}

// Delete removes the entry under name, keeping the order of the others.
func (m *Map) Delete(name string) {
	for i, e := range *m {
		if keyEqual(e.Key, name) {
			*m = append((*m)[:i], (*m)[i+1:]...)
			return
		}
	}
}

// Clone returns a deep copy of m's values: maps, lists and bytes are copied (the bytes of all of them into one
// allocation, each slice capped so an append reallocates). Keys are shared: they are read-only (the codecs
// intern them, and Set never changes one).
func (m Map) Clone() Map {
	if m == nil {
		return nil
	}
	c := cloner{buf: make([]byte, 0, binBytes(m))}
	return c.cloneMap(m)
}

// CloneValue deep-copies a Value (as Clone copies a map's values).
func CloneValue(v Value) Value {
	c := cloner{buf: make([]byte, 0, binBytes(v))}
	return c.clone(v)
}

// binBytes is the length of all the []byte values in v, map keys aside.
func binBytes(v Value) int {
	n := 0
	switch v := v.(type) {
	case []byte:
		n = len(v)
	case []Value:
		for _, x := range v {
			n += binBytes(x)
		}
	case Tuple:
		for _, x := range v {
			n += binBytes(x)
		}
	case Map:
		for _, e := range v {
			n += binBytes(e.Value)
		}
	}
	return n
}

// cloner copies the bytes of the values it clones into buf, sized beforehand by binBytes.
type cloner struct{ buf []byte }

func (c *cloner) clone(v Value) Value {
	switch v := v.(type) {
	case []byte:
		if v == nil {
			return v
		}
		l := len(c.buf)
		c.buf = append(c.buf, v...)
		return c.buf[l:len(c.buf):len(c.buf)]
	case []Value:
		out := make([]Value, len(v))
		for i, x := range v {
			out[i] = c.clone(x)
		}
		return out
	case Tuple:
		out := make(Tuple, len(v))
		for i, x := range v {
			out[i] = c.clone(x)
		}
		return out
	case Map:
		if v == nil {
			return v
		}
		return c.cloneMap(v)
	}
	return v
}

func (c *cloner) cloneMap(m Map) Map {
	out := make(Map, len(m))
	for i, e := range m {
		out[i] = Entry{Key: e.Key, Value: c.clone(e.Value)}
	}
	return out
}
