package hbase

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/frontiercrawl/frontier/hbase/internal/thrift2"
)

// EnsureSchema creates the namespace (if cfg.Namespace is set) and the four tables Frontier uses, with the
// column families described in the package doc. Existing tables are left as they are, so it is
// safe to run again and from several processes at once.
func EnsureSchema(ctx context.Context, cfg Config) error {
	c, err := New(ctx, cfg, nil, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.EnsureSchema(ctx)
}

// EnsureSchema is the package-level EnsureSchema on an open client.
func (c *Client) EnsureSchema(ctx context.Context) error {
	if ns := c.cfg.Namespace; ns != "" {
		err := c.do(ctx, "createNamespace "+ns, true, func(ctx context.Context, svc thrift2.THBaseService) error {
			if _, err := svc.GetNamespaceDescriptor(ctx, ns); err == nil {
				return nil
			}
			err := svc.CreateNamespace(ctx, &thrift2.TNamespaceDescriptor{Name: ns})
			if alreadyExists(err) {
				return nil
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	return c.ensureTables(ctx)
}

// ensureTables creates the named tables (all four if none are named).
func (c *Client) ensureTables(ctx context.Context, only ...string) error {
	for _, t := range c.tables() {
		if len(only) > 0 && !slices.Contains(only, t.name) {
			continue
		}
		if err := c.ensureTable(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

type tableSpec struct {
	name   string
	family *thrift2.TColumnFamilyDescriptor
}

func (c *Client) tables() []tableSpec {
	fam := func(name []byte, inMemory bool) *thrift2.TColumnFamilyDescriptor {
		return &thrift2.TColumnFamilyDescriptor{
			Name:              name,
			MaxVersions:       thrift.Int32Ptr(1),
			BloomnFilterType:  thrift2.TBloomFilterTypePtr(thrift2.TBloomFilterType_ROW),
			BlockCacheEnabled: thrift.BoolPtr(true),
			InMemory:          thrift.BoolPtr(inMemory),
			DataBlockEncoding: thrift2.TDataBlockEncodingPtr(thrift2.TDataBlockEncoding_FAST_DIFF),
		}
	}
	return []tableSpec{
		{statesTable, fam(famState, true)},
		{queueTable, fam(famQueue, false)},
		{metadataTable, fam(famMeta, false)},
		{domainsTable, fam(famMeta, true)},
	}
}

func (c *Client) ensureTable(ctx context.Context, t tableSpec) error {
	name := &thrift2.TTableName{Qualifier: []byte(c.cfg.TablePrefix + t.name)}
	if c.cfg.Namespace != "" {
		name.Ns = []byte(c.cfg.Namespace)
	}
	full := c.cfg.table(t.name)
	return c.do(ctx, "createTable "+full, true, func(ctx context.Context, svc thrift2.THBaseService) error {
		ok, err := svc.TableExists(ctx, name)
		if err != nil || ok {
			return err
		}
		err = svc.CreateTable(ctx, &thrift2.TTableDescriptor{TableName: name, Columns: []*thrift2.TColumnFamilyDescriptor{t.family}}, nil)
		if alreadyExists(err) {
			return nil
		}
		return err
	})
}

// DropTables disables and deletes the four tables (for tests and benchmarks); missing tables are skipped.
func (c *Client) DropTables(ctx context.Context) error {
	var errs []error
	for _, t := range c.tables() {
		name := &thrift2.TTableName{Qualifier: []byte(c.cfg.TablePrefix + t.name)}
		if c.cfg.Namespace != "" {
			name.Ns = []byte(c.cfg.Namespace)
		}
		errs = append(errs, c.do(ctx, "deleteTable "+c.cfg.table(t.name), true, func(ctx context.Context, svc thrift2.THBaseService) error {
			ok, err := svc.TableExists(ctx, name)
			if err != nil || !ok {
				return err
			}
			if en, err := svc.IsTableEnabled(ctx, name); err != nil {
				return err
			} else if en {
				if err := svc.DisableTable(ctx, name); err != nil {
					return err
				}
			}
			return svc.DeleteTable(ctx, name)
		}))
	}
	return errors.Join(errs...)
}

func alreadyExists(err error) bool {
	var ioe *thrift2.TIOError
	if errors.As(err, &ioe) {
		m := ioe.GetMessage()
		return strings.Contains(m, "TableExistsException") || strings.Contains(m, "NamespaceExistException")
	}
	return false
}
