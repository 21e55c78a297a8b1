// Package configs loads Frontier's configuration (docs/operations.md): one YAML file per role under configs/
// (spider.yaml, strategyworker.yaml, dbworker.yaml, standalone.yaml), on top of a shared common.yaml, overridden
// by FRONTIER_* environment variables and by --set key=value flags, in that order of precedence (last wins).
//
// The root Config composes the Config types that live next to their code (each package's Config, DefaultConfig and Validate). Loading is strict:
//
//   - an unknown key in a file stops the start with the file's name and the key ("configs: spider.yaml: unknown
//     key \"spider.user_agnt\"");
//   - an unknown FRONTIER_* environment variable or --set key is an error too (FRONTIER_TEST_* variables belong
//     to the test suites and are ignored);
//   - a value of the wrong type names the key and the file;
//   - Validate reports every invalid value at once, each prefixed with its key.
//
// Environment variables name a key by upper-casing it and replacing dots with underscores:
// streams.spider_log.partitions is FRONTIER_STREAMS_SPIDER_LOG_PARTITIONS. Lists take comma-separated values.
//
// configs sits at level L4: it may import the worker packages and everything below them, and only
// internal/cli and cmd/* import it.
package configs
