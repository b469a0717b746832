// Package config reads the venue's one configuration file (TOML).
//
// Load parses a file, fills every unset value from the embedded defaults
// (default.toml, which is also what `fixvenue serve` runs with when no file is
// given), expands session ranges ("CLIENT%d" over [1, 32]) and validates every
// value. Any error names the key that caused it, for example
// `instrument[1].tick_size: decimal: tick size must be positive`, and unknown keys
// are errors too, so a typo never silently falls back to a default; so is a
// key that names one only without regard to case (`Tick_Size`, `[[Instrument]]`:
// keys.go), which the TOML decoder would take while the defaults and TOML's
// own duplicate check went by the exact name.
// default.toml shows every key Load reads, set or commented out with what it
// does, and no other (TestDefaultTOMLDocumentsEveryKey). Two of
// the venue's TCP listeners at one address (fix.addr and metrics.addr, say)
// are an error naming both keys (listeners.go), as they are after serve's
// address flags.
//
// Settings that name a choice are decoded straight into the type of the
// package that owns it, by that type's UnmarshalText: engine.wait_strategy
// into ring.WaitStrategy, journal.fsync into journal.Policy, an instrument's
// status into venue.TradingStatus. The names are read there and nowhere else,
// and a bad one is reported with its line and key
// (`line 2 (last key "journal.fsync"): journal: fsync policy "always" is not batch or none`).
//
// Per-session QuickFIX settings (HeartBtInt, ResetOnLogon, TimeStampPrecision,
// validation switches, …) are passed through to QuickFIX/Go, their values
// checked here as QuickFIX/Go reads them (Y or N, whole numbers, HH:MM:SS,
// StartTime with EndTime: quickfixvalues.go), so that a value it could not
// parse is an error naming the key before the data directory is touched; the keys
// that the venue itself owns (SenderCompID, TargetCompID, BeginString,
// SocketAcceptPort, DataDictionary, FileStorePath, …) are refused there so that
// there is only one place to set each of them, as are QuickFIX/Go's TLS and
// proxy settings (SocketUseSSL, Socket…Bytes, UseTCPProxy, …): the FIX edge
// terminates TLS (fix.tls_cert_file), and QuickFIX/Go ignored them; and
// so are the settings that would have no effect in the venue: SQL and
// MongoDB stores and logs and FileStoreSync (the venue has its own store
// and log; journal.fix_store_sync sets the store's sync), an initiator's (ReconnectInterval, SocketConnect…, Proxy…),
// DynamicSessions, each refused saying why.
//
// [admin] (operations.go) configures the admin API: its address (loopback
// unless TLS is set), TLS with optional client certificates (a cluster
// node's status listener serves the same: Admin.InClear), and the
// operators' bearer tokens, stored as SHA-256 hashes; the cluster demo's
// published token is refused when the admin addr or the node's own
// status_addr is beyond loopback (anyone holds it). [schedule] configures
// the trading day: an IANA time zone, groups of instruments with pre-open,
// open and close offsets, one end of day, trading days and holidays;
// overlapping phases, an end of day before a close, an unknown time zone or
// symbol are errors naming the key.
//
// A session's kind is "order" (the default) or "dropcopy": a drop-copy session
// enters no orders and is granted the ExecutionReports of other sessions by
// CompID (copy_sessions), by account (copy_accounts) or all (copy_all); a
// grant that names no order session is an error. An order session's accounts
// are the Accounts (1) its orders may name, and an account a session lists
// is refused to every other session (Session.Accounts); a drop-copy session
// with accounts, an account of more than 16 characters or one listed twice
// is an error. The [export] section
// configures the event export to NATS JetStream (export.go).
//
// [cluster] (cluster.go) makes the venue one node of a Raft cluster when its
// node_id is not 0; every node's file lists every node ([[cluster.peer]]:
// id, raft_addr, fix_addr, status_addr, and optionally admin_addr). Without it, or with node_id 0, the
// venue is a single node, the default.
//
// Limits: at most SessionsMax sessions (ranges included: they are counted
// before any is expanded, so a file of ranges naming billions of sessions
// is refused at the one that passes the bound), InstrumentsMax instruments,
// AdminTokensMax tokens, core.RiskAccountsMax risk accounts and
// core.RiskCellsMax risk cells (sessions and accounts × the instruments
// the table may hold), ScheduleGroupsMax schedule groups and
// ClusterNodesMax cluster nodes (and at least ClusterNodesMin); CompIDs,
// the clients' (comp_id) and the venue's (venue.sender_comp_id,
// venue_comp_id), of 1 to CompIDLengthMax printable ASCII characters
// without space or '=' (they are sent in every message and name the
// session's FIX store file); an instrument's band (band_percent around
// ref_price) of at most core.LevelsPerSideMaxDefault ticks of its
// tick_size (each is a price level of each side of its book, allocated
// at start), and max_qty at the band's top price within
// core.OrderNotionalMax ticks (2^62−2, the largest risk limit, so that
// the checks of limits that are not set never refuse an order), and
// max_qty at most core.MaxQtyFor engine.orders_max and clordids_max (the
// sums of that many orders' quantities, a level's depth or the day's
// volume, fit an int64); the file
// is a regular file (not a named pipe or a device) of at most
// ConfigBytesMax bytes, and so are the files it names: the cluster's
// secret (at most ClusterSecretFileBytesMax bytes) and the TLS
// certificates, keys and CAs and export credentials (16 MiB, checked by
// the server before the data directory is touched).
package config
