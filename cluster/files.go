package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"

	"github.com/fixvenue/fixvenue/internal/durable"
	"github.com/fixvenue/fixvenue/journal"
)

// The small files a replica keeps beside its journal segments (doc.go,
// "Files"). Each is little-endian and CRC32C-checked, fixed-size but for
// the voters' list.
const (
	identityFile = "cluster.id"
	// votersFile lists the voting nodes this directory's replica was
	// made among (checkVoters).
	votersFile    = "cluster.voters"
	hardStateFile = "raft.hardstate"
	// legacyIndexFile held the entries' index and term beside the journal
	// in an earlier layout; they are now marks in the segments.
	legacyIndexFile = "raft.index"

	identityMagic  = "FVCLUSTR"
	votersMagic    = "FVVOTERS" // then count u32 | ids u64 ascending | crc u32
	hardStateMagic = "FVRAFTHS"

	identityBytes = 32 // magic 8 | cluster id u64 | node id u64 | reserved u32 | crc u32
	hardStateSlot = 48 // magic 8 | version u64 | term u64 | vote u64 | commit u64 | reserved u32 | crc u32
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrForeignJournal is returned when a journal directory belongs to another
// cluster or another node: joining with it would mix two histories.
var ErrForeignJournal = errors.New("cluster: journal belongs to another cluster")

// checkIdentity makes sure dir belongs to (clusterID, nodeID): it writes the
// identity file into a directory that has none and no journal yet, and
// refuses a directory whose identity differs or whose journal predates it.
func checkIdentity(dir string, clusterID, nodeID uint64, hasJournal bool) error {
	if _, err := os.Stat(filepath.Join(dir, legacyIndexFile)); err == nil {
		return fmt.Errorf("%w: %s holds %s, the layout of an earlier build; this build keeps each entry's index and term in the segments (start this replica from a copy of a current replica's directory)",
			ErrCorrupt, dir, legacyIndexFile)
	}
	path := filepath.Join(dir, identityFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if hasJournal {
			return fmt.Errorf("%w: %s holds a journal but no %s (a single-node journal cannot join a cluster)", ErrForeignJournal, dir, identityFile)
		}
		return writeIdentity(dir, clusterID, nodeID)
	}
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if len(b) != identityBytes || string(b[:8]) != identityMagic ||
		binary.LittleEndian.Uint32(b[28:]) != crc32.Checksum(b[:28], castagnoli) {
		return fmt.Errorf("cluster: %s is damaged", path)
	}
	gotCluster, gotNode := binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[16:])
	if gotCluster != clusterID || gotNode != nodeID {
		// Decimal, as cluster.cluster_id and cluster.node_id are configured
		// (config/default.toml, README "Cluster: three replicas").
		return fmt.Errorf("%w: %s says cluster_id %d node_id %d, this node is configured with cluster_id %d node_id %d",
			ErrForeignJournal, path, gotCluster, gotNode, clusterID, nodeID)
	}
	return nil
}

// checkVoters binds the directory to the cluster's voting nodes: a node
// started with other peers (a configuration that lists only itself, say)
// would count its quorum among them and could lead beside the cluster's
// own leader, both acknowledging orders under the same ExecIDs. A
// directory without the file (a new one, or one made by an earlier build)
// gets it. Membership changes are not supported (cluster/doc.go).
func checkVoters(dir string, voters []uint64) error {
	want := slices.Sorted(slices.Values(voters))
	path := filepath.Join(dir, votersFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		out := append([]byte(votersMagic), binary.LittleEndian.AppendUint32(nil, uint32(len(want)))...)
		for _, v := range want {
			out = binary.LittleEndian.AppendUint64(out, v)
		}
		out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
		return durable.WriteFile(path, out, 0o644)
	}
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	n := 0
	if len(b) >= 12 {
		n = int(binary.LittleEndian.Uint32(b[8:]))
	}
	if len(b) < 16 || string(b[:8]) != votersMagic || len(b) != 16+8*n ||
		binary.LittleEndian.Uint32(b[len(b)-4:]) != crc32.Checksum(b[:len(b)-4], castagnoli) {
		return fmt.Errorf("cluster: %s is damaged", path)
	}
	got := make([]uint64, n)
	for i := range got {
		got[i] = binary.LittleEndian.Uint64(b[12+8*i:])
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("%w: %s says the cluster's voting nodes are %v, the configuration's peers are %v: a node must not "+
			"count a quorum among other nodes than its cluster's (it could lead beside the cluster's leader); configure the "+
			"cluster's peers", ErrForeignJournal, path, got, want)
	}
	return nil
}

func writeIdentity(dir string, clusterID, nodeID uint64) error {
	b := make([]byte, identityBytes)
	copy(b, identityMagic)
	binary.LittleEndian.PutUint64(b[8:], clusterID)
	binary.LittleEndian.PutUint64(b[16:], nodeID)
	binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], castagnoli))
	return durable.WriteFile(filepath.Join(dir, identityFile), b, 0o644)
}

func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("cluster: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("cluster: %w", err)
	}
	return f.Close()
}

// writeReplacing makes path in dir hold b: written to path.part, synced,
// renamed over path and dir synced, so that a crash leaves the old file or
// the new one, whole (a .part left is a write never finished). Not the
// journal's .tmp, which a journal.Open, a truncation's, removes.
func writeReplacing(dir, path string, b []byte) error {
	if err := writeSynced(path+checkpointPartSuffix, b); err != nil {
		return err
	}
	if err := os.Rename(path+checkpointPartSuffix, path); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	return syncDir(dir)
}

func syncDir(dir string) error { return journal.SyncDirectory(dir, journal.DefaultSync) }

// hardState is Raft's term, vote and commit index.
type hardState struct{ term, vote, commit uint64 }

// hardStateStore keeps the hard state in two fixed slots written in turn,
// each fdatasynced: a write torn by a crash damages only the slot being
// written, and the other still holds the previous state.
type hardStateStore struct {
	f       *os.File
	version uint64 // of the last slot written
	buf     [hardStateSlot]byte
}

func openHardState(dir string) (*hardStateStore, hardState, error) {
	f, err := os.OpenFile(filepath.Join(dir, hardStateFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, hardState{}, fmt.Errorf("cluster: %w", err)
	}
	s := &hardStateStore{f: f}
	var best hardState
	b := make([]byte, 2*hardStateSlot)
	n, _ := f.ReadAt(b, 0)
	for slot := 0; slot+hardStateSlot <= n; slot += hardStateSlot {
		p := b[slot : slot+hardStateSlot]
		if string(p[:8]) != hardStateMagic || binary.LittleEndian.Uint32(p[44:]) != crc32.Checksum(p[:44], castagnoli) {
			continue // never written, or torn by a crash: the other slot holds the state
		}
		if v := binary.LittleEndian.Uint64(p[8:]); v >= s.version {
			s.version = v
			best = hardState{term: binary.LittleEndian.Uint64(p[16:]), vote: binary.LittleEndian.Uint64(p[24:]),
				commit: binary.LittleEndian.Uint64(p[32:])}
		}
	}
	return s, best, nil
}

// save writes hs to the slot not holding the newest state and fdatasyncs.
func (s *hardStateStore) save(hs hardState) error {
	s.version++
	p := s.buf[:]
	clear(p)
	copy(p, hardStateMagic)
	binary.LittleEndian.PutUint64(p[8:], s.version)
	binary.LittleEndian.PutUint64(p[16:], hs.term)
	binary.LittleEndian.PutUint64(p[24:], hs.vote)
	binary.LittleEndian.PutUint64(p[32:], hs.commit)
	binary.LittleEndian.PutUint32(p[44:], crc32.Checksum(p[:44], castagnoli))
	if _, err := s.f.WriteAt(p, int64(s.version%2)*hardStateSlot); err != nil {
		return fmt.Errorf("cluster: write hard state: %w", err)
	}
	if err := journal.DefaultSync(s.f, journal.SyncData); err != nil {
		return fmt.Errorf("cluster: sync hard state: %w", err)
	}
	return nil
}

func (s *hardStateStore) close() error { return s.f.Close() }

// entryMeta describes one Raft entry: the commands it carries are the
// journal records firstSeq .. firstSeq+count-1 (count 0: an empty entry,
// such as the one a new leader commits in its term).
type entryMeta struct {
	index, term, firstSeq uint64
	count                 uint32
	bytes                 int64 // the entry's data held in memory (not stored)
}

func (m entryMeta) nextSeq() uint64 { return m.firstSeq + uint64(m.count) }
