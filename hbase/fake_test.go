package hbase

import (
	"bytes"
	"context"
	"encoding/binary"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/frontiercrawl/frontier/hbase/internal/thrift2"
)

// fakeHBase is an in-memory stand-in for the Thrift2 gateway: the RPCs the stores use, with HBase's semantics
// where the stores depend on them (sorted range scans, whole-row deletes, versions=0 returning nothing, missing
// tables failing). fail, if set, is called before each RPC and may inject an error.
type fakeHBase struct {
	thrift2.THBaseService // RPCs the stores do not use panic (nil)

	mu     sync.Mutex
	ns     map[string]bool
	tables map[string]map[string]map[string][]byte // table -> row -> "family:qualifier" -> value
	calls  map[string]int
	fail   func(op string) error
	// after, if set, is called after a checkAndMutate applied and may replace its answer with an error (an
	// answer lost on the way back).
	after func(op string) error
}

func newFakeHBase() *fakeHBase {
	return &fakeHBase{ns: map[string]bool{"default": true}, tables: map[string]map[string]map[string][]byte{}, calls: map[string]int{}}
}

// newFakeClient returns a Client over f with the schema in place.
func newFakeClient(f *fakeHBase, cfg Config) *Client {
	c := newClient(cfg, nil, prometheus.NewRegistry(), func(context.Context) (*conn, error) { return &conn{svc: f}, nil })
	if err := c.EnsureSchema(context.Background()); err != nil {
		panic(err)
	}
	return c
}

func (f *fakeHBase) enter(op string) error {
	f.calls[op]++
	if f.fail != nil {
		return f.fail(op)
	}
	return nil
}

func (f *fakeHBase) table(name []byte) (map[string]map[string][]byte, error) {
	t, ok := f.tables[string(name)]
	if !ok {
		return nil, &thrift2.TIOError{Message: thrift2Str("org.apache.hadoop.hbase.TableNotFoundException: " + string(name))}
	}
	return t, nil
}

func thrift2Str(s string) *string { return &s }

func tname(n *thrift2.TTableName) string {
	if len(n.Ns) == 0 {
		return string(n.Qualifier)
	}
	return string(n.Ns) + ":" + string(n.Qualifier)
}

func result(row string, cells map[string][]byte, cols []*thrift2.TColumn, keyOnly, firstOnly bool) *thrift2.TResult_ {
	r := &thrift2.TResult_{}
	names := make([]string, 0, len(cells))
	for n := range cells {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fam, qual, _ := strings.Cut(n, ":")
		if len(cols) > 0 {
			ok := false
			for _, c := range cols {
				if string(c.Family) == fam && (c.Qualifier == nil || string(c.Qualifier) == qual) {
					ok = true
				}
			}
			if !ok {
				continue
			}
		}
		v := bytes.Clone(cells[n])
		if keyOnly {
			v = []byte{}
		}
		r.ColumnValues = append(r.ColumnValues, &thrift2.TColumnValue{Family: []byte(fam), Qualifier: []byte(qual), Value: v})
		if firstOnly {
			break
		}
	}
	if len(r.ColumnValues) > 0 {
		r.Row = []byte(row)
	}
	return r
}

func (f *fakeHBase) GetThriftServerType(ctx context.Context) (thrift2.TThriftServerType, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return thrift2.TThriftServerType_TWO, f.enter("getThriftServerType")
}

func (f *fakeHBase) Get(ctx context.Context, table []byte, g *thrift2.TGet) (*thrift2.TResult_, error) {
	r, err := f.GetMultiple(ctx, table, []*thrift2.TGet{g})
	if err != nil {
		return nil, err
	}
	return r[0], nil
}

func (f *fakeHBase) GetMultiple(ctx context.Context, table []byte, gets []*thrift2.TGet) ([]*thrift2.TResult_, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("getMultiple"); err != nil {
		return nil, err
	}
	t, err := f.table(table)
	if err != nil {
		return nil, err
	}
	out := make([]*thrift2.TResult_, len(gets))
	for i, g := range gets {
		out[i] = result(string(g.Row), t[string(g.Row)], g.Columns, false, false)
	}
	return out, nil
}

func (f *fakeHBase) PutMultiple(ctx context.Context, table []byte, puts []*thrift2.TPut) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("putMultiple"); err != nil {
		return err
	}
	t, err := f.table(table)
	if err != nil {
		return err
	}
	for _, p := range puts {
		if len(p.ColumnValues) == 0 || len(p.Row) == 0 {
			return &thrift2.TIllegalArgument{Message: thrift2Str("No columns to insert")}
		}
		row := t[string(p.Row)]
		if row == nil {
			row = map[string][]byte{}
			t[string(p.Row)] = row
		}
		for _, cv := range p.ColumnValues {
			row[string(cv.Family)+":"+string(cv.Qualifier)] = bytes.Clone(cv.Value)
		}
	}
	return nil
}

func (f *fakeHBase) DeleteMultiple(ctx context.Context, table []byte, dels []*thrift2.TDelete) ([]*thrift2.TDelete, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("deleteMultiple"); err != nil {
		return nil, err
	}
	t, err := f.table(table)
	if err != nil {
		return nil, err
	}
	for _, d := range dels {
		if len(d.Columns) > 0 {
			panic("fake: column deletes are not modelled")
		}
		delete(t, string(d.Row))
	}
	return nil, nil
}

func (f *fakeHBase) Increment(ctx context.Context, table []byte, inc *thrift2.TIncrement) (*thrift2.TResult_, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("increment"); err != nil {
		return nil, err
	}
	t, err := f.table(table)
	if err != nil {
		return nil, err
	}
	row := t[string(inc.Row)]
	if row == nil {
		row = map[string][]byte{}
		t[string(inc.Row)] = row
	}
	var cols []*thrift2.TColumn
	for _, c := range inc.Columns {
		n := string(c.Family) + ":" + string(c.Qualifier)
		var v int64
		if old, ok := row[n]; ok {
			if len(old) != 8 {
				return nil, &thrift2.TIOError{Message: thrift2Str("DoNotRetryIOException: Field is not a long")}
			}
			v = int64(binary.BigEndian.Uint64(old))
		}
		row[n] = binary.BigEndian.AppendUint64(nil, uint64(v+c.Amount))
		cols = append(cols, &thrift2.TColumn{Family: c.Family, Qualifier: c.Qualifier})
	}
	return result(string(inc.Row), row, cols, false, false), nil
}

func (f *fakeHBase) scan(t map[string]map[string][]byte, sc *thrift2.TScan, n int32) []*thrift2.TResult_ {
	if sc.MaxVersions == 0 {
		return nil // HBase returns no cells when asked for zero versions
	}
	keys := make([]string, 0, len(t))
	for k := range t {
		if k >= string(sc.StartRow) && (len(sc.StopRow) == 0 || k < string(sc.StopRow)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	filter := string(sc.FilterString)
	var out []*thrift2.TResult_
	for _, k := range keys {
		if int32(len(out)) >= n {
			break
		}
		r := result(k, t[k], sc.Columns, strings.Contains(filter, "KeyOnlyFilter"), strings.Contains(filter, "FirstKeyOnlyFilter"))
		if len(r.ColumnValues) > 0 {
			out = append(out, r)
		}
	}
	return out
}

func (f *fakeHBase) GetScannerResults(ctx context.Context, table []byte, sc *thrift2.TScan, n int32) ([]*thrift2.TResult_, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("getScannerResults"); err != nil {
		return nil, err
	}
	t, err := f.table(table)
	if err != nil {
		return nil, err
	}
	return f.scan(t, sc, n), nil
}

// Scanners are modelled as a snapshot of the rows taken at open, handed out in pieces.
var fakeScanners = struct {
	sync.Mutex
	next int32
	rows map[int32][]*thrift2.TResult_
}{rows: map[int32][]*thrift2.TResult_{}}

func (f *fakeHBase) OpenScanner(ctx context.Context, table []byte, sc *thrift2.TScan) (int32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("openScanner"); err != nil {
		return 0, err
	}
	t, err := f.table(table)
	if err != nil {
		return 0, err
	}
	rows := f.scan(t, sc, 1<<30)
	fakeScanners.Lock()
	defer fakeScanners.Unlock()
	fakeScanners.next++
	fakeScanners.rows[fakeScanners.next] = rows
	return fakeScanners.next, nil
}

func (f *fakeHBase) GetScannerRows(ctx context.Context, id int32, n int32) ([]*thrift2.TResult_, error) {
	fakeScanners.Lock()
	defer fakeScanners.Unlock()
	rows, ok := fakeScanners.rows[id]
	if !ok {
		return nil, &thrift2.TIllegalArgument{Message: thrift2Str("Invalid scanner Id")}
	}
	k := min(int(n), len(rows))
	fakeScanners.rows[id] = rows[k:]
	return rows[:k], nil
}

func (f *fakeHBase) CloseScanner(ctx context.Context, id int32) error {
	fakeScanners.Lock()
	defer fakeScanners.Unlock()
	delete(fakeScanners.rows, id)
	return nil
}

func (f *fakeHBase) TableExists(ctx context.Context, n *thrift2.TTableName) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("tableExists"); err != nil {
		return false, err
	}
	_, ok := f.tables[tname(n)]
	return ok, nil
}

func (f *fakeHBase) CreateTable(ctx context.Context, d *thrift2.TTableDescriptor, splits [][]byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("createTable"); err != nil {
		return err
	}
	name := tname(d.TableName)
	if ns := string(d.TableName.Ns); ns != "" && !f.ns[ns] {
		return &thrift2.TIOError{Message: thrift2Str("NamespaceNotFoundException: " + ns)}
	}
	if _, ok := f.tables[name]; ok {
		return &thrift2.TIOError{Message: thrift2Str("org.apache.hadoop.hbase.TableExistsException: " + name)}
	}
	f.tables[name] = map[string]map[string][]byte{}
	return nil
}

func (f *fakeHBase) IsTableEnabled(ctx context.Context, n *thrift2.TTableName) (bool, error) {
	return true, nil
}

func (f *fakeHBase) DisableTable(ctx context.Context, n *thrift2.TTableName) error { return nil }

func (f *fakeHBase) DeleteTable(ctx context.Context, n *thrift2.TTableName) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.tables, tname(n))
	return nil
}

func (f *fakeHBase) GetNamespaceDescriptor(ctx context.Context, name string) (*thrift2.TNamespaceDescriptor, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.ns[name] {
		return nil, &thrift2.TIOError{Message: thrift2Str("org.apache.hadoop.hbase.NamespaceNotFoundException: " + name)}
	}
	return &thrift2.TNamespaceDescriptor{Name: name}, nil
}

func (f *fakeHBase) CreateNamespace(ctx context.Context, d *thrift2.TNamespaceDescriptor) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("createNamespace"); err != nil {
		return err
	}
	if f.ns[d.Name] {
		return &thrift2.TIOError{Message: thrift2Str("org.apache.hadoop.hbase.NamespaceExistException: " + d.Name)}
	}
	f.ns[d.Name] = true
	return nil
}

func (f *fakeHBase) CheckAndMutate(ctx context.Context, table []byte, row []byte, family []byte, qualifier []byte, op thrift2.TCompareOp, value []byte, m *thrift2.TRowMutations) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("checkAndMutate"); err != nil {
		return false, err
	}
	t, err := f.table(table)
	if err != nil {
		return false, err
	}
	if op != thrift2.TCompareOp_EQUAL {
		panic("fake: only EQUAL checks are modelled")
	}
	cells := t[string(row)]
	cur, ok := cells[string(family)+":"+string(qualifier)]
	// HBase: an empty expected value matches a missing cell (or an empty one).
	if match := (len(value) == 0 && (!ok || len(cur) == 0)) || (ok && len(value) > 0 && bytes.Equal(cur, value)); !match {
		return false, nil
	}
	if cells == nil {
		cells = map[string][]byte{}
		t[string(row)] = cells
	}
	for _, mu := range m.Mutations {
		if mu.Put == nil {
			panic("fake: only puts are modelled in checkAndMutate")
		}
		for _, cv := range mu.Put.ColumnValues {
			cells[string(cv.Family)+":"+string(cv.Qualifier)] = bytes.Clone(cv.Value)
		}
	}
	if f.after != nil {
		if err := f.after("checkAndMutate"); err != nil {
			return false, err
		}
	}
	return true, nil
}
