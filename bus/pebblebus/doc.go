// Package pebblebus is a durable in-process implementation of the bus interfaces: the streams of standalone
// mode (package standalone), kept as logs in a Pebble database, so that stopping the process, or killing it with
// -9, loses none of the spider log, the scoring log or the spider feed. It keeps the Kafka contract that
// bus/bustest holds every implementation to: each partition is an ordered log with offsets, consumer groups
// commit offsets per partition, a consumer opened again (in this process or after a restart) resumes after
// its group's last commit, and Lag reports latest − committed. What the workers commit only after their
// effects are durable therefore survives exactly as it does on Kafka: a crash replays what was not committed.
//
// # Why a log in the store's own Pebble database
//
// The alternative designs were a Pebble database of its own in the data directory, or having each stage write
// its effects and its consumed position in one batch. The second changes every worker and every store
// interface for one mode. The first costs a second write-ahead log and, worse, gives no order between the two
// databases: with unsynced writes a consumer's commit could survive a crash while the effects it acknowledged
// did not. In one database every write (store rows, bus messages, committed offsets) goes through one WAL in
// commit order, and Pebble recovers a prefix of that WAL, so whatever survives a crash is a state the process
// really passed through: an offset is never found committed without the writes made before it. Open takes the
// *pebble.DB that pebblestore opened (pebblestore.DB.Pebble) and a key prefix no other user of the database
// writes under (Config.Prefix, default 'B'; pebblestore's tables use lower-case letters).
//
// # Durability
//
// With Config.Sync (the default, and what package standalone passes from pebblestore.Config.Sync) every Send and every
// Commit is one Pebble batch committed with a WAL fsync before it returns: an acknowledged message or commit
// survives kill -9 and a power loss. Without it, writes are committed with pebble.NoSync: Pebble hands the
// WAL record to its flusher goroutine, which writes it to the OS file a moment later, so a kill -9 loses at
// most the last few milliseconds of writes (a power loss, whatever the OS had not written back), always as a
// suffix: the resumed crawl replays, or fetches again, what those writes acknowledged, and loses nothing the
// consumers had not committed. Concurrent Sends to one stream are written one at a time (offsets are assigned
// in write order), but the fsyncs of different streams and of the stores are grouped by Pebble's commit
// pipeline, and the spider's reporter batches whatever accumulated while the previous fsync ran, so the
// number of fsyncs per page stays well below one under load.
//
// Config.DeferSends and Config.DeferCommits name writes that skip their own fsync even with Sync: they are
// durable once the next synced write to the database returns, because an fsync makes the whole WAL written
// so far durable and recovery keeps a prefix of it. Standalone mode (package standalone) defers everything but
// the spiders' writes: Sends to the spider log (a spider's report, its seeds) and Commits on the spider feed
// stay synced, since the spider journals, archives and compacts its journal outside the database on the
// strength of them (spider.DurableProducer); the scoring log's and the feed's Sends and the spider log's and
// the scoring log's Commits are deferred, as are the stores' writes (pebblestore.Config.DeferSync). Every
// consumer of those is in the same database, so a crash finds them as a prefix of what the process did,
// consistent with each group's committed offset, and replays the rest; a deferred write a spider read
// before a crash is durable before that spider reports anything that depends on it. It takes the fsyncs of a
// round of the loop from one per write of every role (about ten) to one per spider report batch and feed
// commit (BenchmarkRound).
//
// # Key layout
//
//	P 'm' stream partition:u32 first:u64 count:u32 → per message: uvarint(len(key)) uvarint(len(value)) key value
//	P 'o' stream partition:u32 group                 → next offset to read: u64        (committed offsets)
//	P 'n' stream                                     → partition count: u32
//
// P is Config.Prefix, stream one byte ('l' spider log, 's' scoring log, 'f' spider feed), integers
// big-endian so that byte order is offset order. A message key is a segment: the messages first …
// first+count−1 of one Send to one partition, at most 64 messages and cut once it holds 64 KiB, so that a
// message costs the memtable, the flushes and every reading iterator a fraction of a key instead of a key of
// its own, and its release a fraction of a single deletion (BenchmarkSendFetchCommit: twice the messages per
// CPU-second). A Fetch starting inside a segment skips the messages before its offset. Keys written before
// segments (P 'm' stream partition offset → uvarint(len(key)) key value, one message each) are read,
// continued after and released as segments of one.
//
// # Retention
//
// A partition keeps its messages from the lowest offset any interested group still needs: the groups named in
// Config.Groups for the stream, plus every group that has committed on it (committed groups are remembered
// across restarts). The segments wholly below that offset are removed in the batch of the commit that released
// them (a segment with one message still needed stays whole), so a crawl's streams use disk only for their
// uncommitted backlog: a run of up to 4,096 segments with single deletions (Pebble's SingleDelete), a longer
// one with one range deletion. A segment key is written exactly once (offsets never repeat, and a crash keeps
// a prefix of the writes), which is what a single deletion requires; it cancels out with the segment's write
// wherever the two meet, in the memtable's flush or in a compaction, so a segment released before its
// memtable is flushed costs the tables nothing, not even a tombstone. A partition's segment bounds are kept
// in memory too (read at Open), a few bytes per segment of the backlog. A group that commits
// once and never again holds every later message: list only the groups that run, and name one that ran
// once and no longer does in Config.Retired, whose groups Open forgets. Nothing bounds the backlog
// in memory; it lives on disk.
//
// Changing a stream's partition count while it still holds messages is refused at Open (those messages would
// be read by the wrong owner, or by none); with the stream empty the new count is recorded.
//
// # Concurrency and lifecycle
//
// A Bus is safe for concurrent use; its consumers are used by one goroutine each, as bus.Consumer says.
// Close the producers and consumers, then the Bus, then the Pebble database (the Bus never closes it).
//
// It imports bus, Pebble and the standard library.
package pebblebus
