import Foundation
package import GroveCluster
@_spi(GroveInternal) package import GroveWire
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization

/// The shared machine store: PostgreSQL through postgres-nio, one database for every worker of
/// every topology that names it (rows told apart by topology and worker; the schema is in
/// `PostgresMachineStore+Schema.swift`). What SQLite keeps on one host's disk is here where
/// another host's worker can read it, which handoff (issue 37) builds on.
///
/// The worker calls a store from its I/O loop's thread, synchronously; postgres-nio is
/// asynchronous, so each call waits on its future there (the loop is not one of NIO's event
/// loops). One ``commit(_:)`` is one round trip: one call of the `grove_commit_v4` function,
/// whose statement is the transaction, with every part as arrays. `StoreFlush.process` commits
/// with `synchronous_commit = off` (the server has it once the call returns, so it survives the
/// worker being killed, not the database host losing power), `.disk` with the server's default.
///
/// Opening takes the worker's next epoch (``epoch``), the fencing token every commit checks: a
/// second process that opens the store under the same worker name fences the first, whose next
/// commit fails with `fenced`.
package final class PostgresMachineStore: MachineStore {
    package let location: PostgresLocation
    package let topology: String
    package let worker: String
    /// The fencing token this process holds.
    package let epoch: Int64

    package var label: String { "the PostgreSQL store at \(location) (topology '\(topology)', worker '\(worker)')" }
    private let connection: Mutex<PostgresConnection?>
    private let logger: Logger

    /// Connects, creates the tables when missing, and takes the worker's next epoch.
    /// - Throws: ``StoreError``: `failed` when the server cannot be reached (with where and
    ///   what to check), `permission` when it refuses the user or password, `newerVersion`
    ///   when a newer Grove wrote the database.
    package init(location: PostgresLocation, topology: String, worker: String) throws(StoreError) {
        self.location = location
        self.topology = topology
        self.worker = worker
        var logger = Logger(label: "grove.store.postgres")
        logger.logLevel = .warning
        self.logger = logger
        let opened = try Self.connect(location, logger: logger)
        connection = Mutex(opened)
        do {
            try Self.prepareSchema(on: opened, logger: logger, location: location, topology: topology)
            let rows = try opened.query("""
                INSERT INTO grove_workers (topology, worker, epoch) VALUES (\(topology), \(worker), 1)
                ON CONFLICT (topology, worker) DO UPDATE SET epoch = grove_workers.epoch + 1 RETURNING epoch
                """, logger: logger).wait()
            guard let epoch = try rows.rows.first?.decode(Int64.self) else {
                throw StoreError("PostgreSQL at \(location) returned no epoch for worker '\(worker)'")
            }
            self.epoch = epoch
            // Entries this worker wrote for machines that never got a record: a store does not
            // keep them across a restart (``MachineStore/journal(of:after:)``).
            _ = try opened.query("""
                DELETE FROM grove_journal_runs j WHERE j.topology = \(topology) AND j.writer = \(worker)
                AND NOT EXISTS (SELECT 1 FROM grove_machines m WHERE m.topology = j.topology AND m.address = j.address)
                """, logger: logger).wait()
        } catch {
            try? opened.close().wait()
            throw Self.storeError(error, location: location, doing: "prepare the store in")
        }
    }

    /// The store a welcome names (``SharedStore``), with the password from `passwordFile`,
    /// else from ``PostgresLocation/passwordVariable``.
    /// - Throws: ``StoreError``, as ``init(location:topology:worker:)``, and `failed` or
    ///   `permission` for a URL or a password file that cannot be used.
    package static func open(_ shared: SharedStore, worker: String, passwordFile: String?) throws(StoreError) -> PostgresMachineStore {
        let location: PostgresLocation
        do throws(PostgresLocation.Problem) {
            location = try PostgresLocation(url: shared.postgres, passwordFile: passwordFile)
        } catch {
            throw StoreError(error.message, code: error.permission ? .permission : .failed)
        }
        return try PostgresMachineStore(location: location, topology: shared.topology, worker: worker)
    }

    deinit {
        close()
    }

    /// Closes the connection; later calls throw `closed`. Safe to call twice.
    package func close() {
        let open = connection.withLock { connection in
            defer { connection = nil }
            return connection
        }
        try? open?.close().wait()
    }

    private static func connect(_ location: PostgresLocation, logger: Logger) throws(StoreError) -> PostgresConnection {
        let tls: PostgresConnection.Configuration.TLS
        if location.requiresTLS {
            do {
                tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            } catch {
                throw StoreError("cannot set up TLS for PostgreSQL at \(location): \(error)")
            }
        } else {
            tls = .disable
        }
        let configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: tls)
        do {
            return try PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(),
                                                  configuration: configuration, id: 1, logger: logger).wait()
        } catch {
            throw storeError(error, location: location, doing: "connect to")
        }
    }

    private static func prepareSchema(on connection: PostgresConnection, logger: Logger, location: PostgresLocation,
                                      topology: String) throws {
        _ = try connection.query("BEGIN", logger: logger).wait()
        do {
            for statement in schema {
                _ = try connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).wait()
            }
            let found = try connection.query("SELECT max(format) FROM grove_format", logger: logger).wait()
            let written = try found.rows.first?.decode(Int?.self) ?? nil
            if let written, written > format {
                throw StoreError("PostgreSQL at \(location) was written by a newer Grove (format \(written), this one writes \(format)): "
                                 + "run that Grove's workers, or point this topology at another database", code: .newerVersion)
            }
            if written ?? 0 < format {
                // A new database, or one of before that the statements above brought to this format.
                _ = try connection.query("DELETE FROM grove_format", logger: logger).wait()
                _ = try connection.query("INSERT INTO grove_format (format) VALUES (\(format))", logger: logger).wait()
            }
            try moveFormatOneJournal(of: topology, on: connection, logger: logger, location: location)
            _ = try connection.query("COMMIT", logger: logger).wait()
        } catch {
            _ = try? connection.query("ROLLBACK", logger: logger).wait()
            throw error
        }
    }

    /// Format 1's journal entries of `topology` become runs of one, at every open: a worker of
    /// format 1 still running when the database moved to 2 may have written more since (it is
    /// refused at its next open). Only this topology's, so that another's entries, whatever
    /// they hold, cannot keep it from opening.
    private static func moveFormatOneJournal(of topology: String, on connection: PostgresConnection, logger: Logger,
                                             location: PostgresLocation) throws {
        do {
            _ = try connection.query("""
                INSERT INTO grove_journal_runs (topology, address, last, writer, sequences, events, times)
                    SELECT topology, address, sequence, writer, ARRAY[sequence], ARRAY[event], ARRAY[time] FROM grove_journal
                    WHERE topology = \(topology)
                """, logger: logger).wait()
            _ = try connection.query("DELETE FROM grove_journal WHERE topology = \(topology)", logger: logger).wait()
        } catch {
            let cause = storeError(error, location: location, doing: "move the format-1 journal of topology '\(topology)' in")
            throw StoreError("PostgreSQL at \(location): topology '\(topology)' has format-1 journal entries (grove_journal) that "
                             + "cannot become runs (\(cause.message)); an entry and a run holding one sequence of one address is "
                             + "not something Grove writes: restore the store from a backup", code: .corrupt)
        }
    }

    // MARK: - MachineStore

    package func commit(_ commit: StoreCommit) throws(StoreError) {
        guard !commit.isEmpty else { return }
        // One row per address: an upsert may not touch a row twice in one statement, and the
        // last record of an address is the one that counts.
        var latest: [String: Int] = [:]
        for (index, record) in commit.records.enumerated() { latest[record.address] = index }
        // In the order the function locks them (bytes): see `commitFunction`.
        let records = commit.records.indices.filter { latest[commit.records[$0].address] == $0 }.map { commit.records[$0] }
            .sorted { $0.address.utf8.lexicographicallyPrecedes($1.address.utf8) }
        let letters = commit.deadLetters
        let forgotten = commit.forgottenAnswers, answers = commit.answers
        let query: PostgresQuery = """
            SELECT grove_commit_v5(\(topology), \(worker), \(epoch), \(commit.flush == .disk), \(commit.removed),
                \(records.map(\.address)), \(records.map(\.type)), \(records.map { ByteBuffer(bytes: $0.snapshot) }),
                \(records.map { Int64(bitPattern: $0.sequence) }),
                \(commit.journal.map(\.address)), \(commit.journal.map { Int64(bitPattern: $0.sequence) }),
                \(commit.journal.map { ByteBuffer(bytes: $0.event) }), \(commit.journal.map(\.time)),
                \(commit.truncations.map(\.address)), \(commit.truncations.map { Int64(bitPattern: $0.through) }),
                \(letters.map(\.address)), \(letters.map(\.type)), \(letters.map { ByteBuffer(bytes: $0.event) }),
                \(letters.map(\.binary)), \(letters.map(\.error)), \(letters.map { Int32(clamping: $0.crashes) }), \(letters.map(\.time)),
                \(forgotten.map(\.address)), \(forgotten.map { ByteBuffer(bytes: $0.key.client) }),
                \(forgotten.map { Int64(bitPattern: $0.key.sequence) }),
                \(answers.map(\.address)), \(answers.map { ByteBuffer(bytes: $0.entry.key.client) }),
                \(answers.map { Int64(bitPattern: $0.entry.key.sequence) }), \(answers.map { Int64(bitPattern: $0.entry.slot) }),
                \(answers.map { Int32($0.entry.answer.kind.rawValue) }), \(answers.map { Int32($0.entry.answer.flags.rawValue) }),
                \(answers.map { ByteBuffer(bytes: $0.entry.answer.payload) }))
            """
        try run(query, doing: "commit to")
    }

    package func answers(of address: String) throws(StoreError) -> [AnswerEntry] {
        try run("""
            SELECT client, sequence, slot, kind, flags, payload FROM grove_answers
            WHERE topology = \(topology) AND address = \(address)
            """, doing: "read the kept answers of") { row -> AnswerEntry? in
            let (client, sequence, slot, kind, flags, payload) = try row.decode((ByteBuffer, Int64, Int64, Int32, Int32, ByteBuffer).self)
            let id = Array(client.readableBytesView)
            guard let kind = MessageKind(rawValue: UInt8(truncatingIfNeeded: kind)),
                  (1...IdempotencyKey.maximumBoundClientLength).contains(id.count) else { return nil }
            return AnswerEntry(key: IdempotencyKey(client: id, sequence: UInt64(bitPattern: sequence)), slot: UInt64(bitPattern: slot),
                               answer: KeptAnswer(kind: kind, flags: Header.Flags(rawValue: UInt8(truncatingIfNeeded: flags)),
                                                  payload: Array(payload.readableBytesView)))
        }.compactMap { $0 }
    }

    package func records() throws(StoreError) -> [MachineRecord] {
        try run("""
            SELECT address, type, snapshot, sequence FROM grove_machines
            WHERE topology = \(topology) AND owner = \(worker) ORDER BY address COLLATE "C"
            """, doing: "read the machines of") { row in
            let (address, type, snapshot, sequence) = try row.decode((String, String, ByteBuffer, Int64).self)
            return MachineRecord(address: address, type: type, snapshot: Array(snapshot.readableBytesView),
                                 sequence: UInt64(bitPattern: sequence))
        }
    }

    package func records(leavingResting resting: Set<String>) throws(StoreError) -> [MachineRecord] {
        guard !resting.isEmpty else { return try records() }
        let machines = resting.sorted()
        // Those to run through the partial index, then the others not of a resting machine's
        // keyed instances (read through the owner index).
        let toRun = Self.toRun, rests = Self.rests
        return try run("""
            SELECT * FROM (SELECT address, type, snapshot, sequence FROM grove_machines
                WHERE topology = \(topology) AND owner = \(worker) AND \(unescaped: toRun)
            UNION ALL SELECT address, type, snapshot, sequence FROM grove_machines
                WHERE topology = \(topology) AND owner = \(worker) AND \(unescaped: rests)
                AND NOT (strpos(address, '/') > 0 AND split_part(address, '/', 1) = ANY(\(machines)))) AS r
            ORDER BY address COLLATE "C"
            """, doing: "read the machines to run of") { row in
            let (address, type, snapshot, sequence) = try row.decode((String, String, ByteBuffer, Int64).self)
            return MachineRecord(address: address, type: type, snapshot: Array(snapshot.readableBytesView),
                                 sequence: UInt64(bitPattern: sequence))
        }
    }

    package func keyedInstances(of machine: String) throws(StoreError) -> [StoredInstance] {
        let range = KeyedRange(machine)
        return try run("""
            SELECT address, type FROM grove_machines
            WHERE topology = \(topology) AND owner = \(worker)
                AND address COLLATE "C" >= \(range.from) AND address COLLATE "C" < \(range.to)
            ORDER BY address COLLATE "C"
            """, doing: "list the instances of") { row in
            let (address, type) = try row.decode((String, String).self)
            return StoredInstance(address: address, type: type)
        }
    }

    package func record(of address: String) throws(StoreError) -> MachineRecord? {
        try run("""
            SELECT type, snapshot, sequence FROM grove_machines
            WHERE topology = \(topology) AND address = \(address) AND owner = \(worker)
            """, doing: "read a machine of") { row in
            let (type, snapshot, sequence) = try row.decode((String, ByteBuffer, Int64).self)
            return MachineRecord(address: address, type: type, snapshot: Array(snapshot.readableBytesView),
                                 sequence: UInt64(bitPattern: sequence))
        }.first
    }

    package func claim(_ address: String) throws(StoreError) -> MachineRecord? {
        try run("""
            SELECT c_type, c_snapshot, c_sequence FROM grove_claim_v2(\(topology), \(worker), \(epoch), \(address))
            """, doing: "claim a machine in") { row in
            let (type, snapshot, sequence) = try row.decode((String, ByteBuffer, Int64).self)
            return MachineRecord(address: address, type: type, snapshot: Array(snapshot.readableBytesView),
                                 sequence: UInt64(bitPattern: sequence))
        }.first
    }

    package func movedAway(among addresses: [String]) throws(StoreError) -> Set<String> {
        guard !addresses.isEmpty else { return [] }
        return Set(try run("""
            SELECT address FROM grove_machines
            WHERE topology = \(topology) AND address = ANY(\(addresses)) AND owner <> \(worker)
            """, doing: "read the owners of machines in") { row in try row.decode(String.self) })
    }

    package func withWorkDue(among addresses: [String]) throws(StoreError) -> [String] {
        guard !addresses.isEmpty else { return [] }
        let rests = Self.rests
        return try run("""
            SELECT address FROM grove_machines
            WHERE topology = \(topology) AND address = ANY(\(addresses)) AND NOT \(unescaped: rests) ORDER BY address
            """, doing: "read which handed-back machines have work due in") { row in try row.decode(String.self) }
    }

    package func journal(of address: String, after sequence: UInt64) throws(StoreError) -> [JournalEntry] {
        let after = Int64(bitPattern: sequence)
        // The runs that end after `sequence`, in order; the first may begin at or before it. A
        // run with a NULL element comes back empty and marked, to be refused below by name.
        let runs = try run("""
            SELECT last, whole, CASE WHEN whole THEN sequences ELSE '{}' END, CASE WHEN whole THEN events ELSE '{}' END,
                   CASE WHEN whole THEN times ELSE '{}' END
            FROM (SELECT last, sequences, events, times, array_position(sequences, NULL) IS NULL
                         AND array_position(events, NULL) IS NULL AND array_position(times, NULL) IS NULL AS whole
                  FROM grove_journal_runs
                  WHERE topology = \(topology) AND address = \(address) AND last > \(after)) r
            ORDER BY last
            """, doing: "read the journal of") { row in try row.decode((Int64, Bool, [Int64], [ByteBuffer], [Int64]).self) }
        var entries: [JournalEntry] = []
        var previous: Int64?
        for (last, whole, sequences, events, times) in runs {
            if let problem = Self.problem(ofRun: last, whole: whole, sequences: sequences, events: events.count, times: times.count,
                                          after: previous) {
                throw StoreError("PostgreSQL at \(location) holds a journal run of '\(address)' (last \(last)) that \(problem): "
                                 + "Grove never writes one, so the store was changed by something else; restore it from a backup",
                                 code: .corrupt)
            }
            previous = last
            for index in sequences.indices where sequences[index] > after {
                entries.append(JournalEntry(address: address, sequence: UInt64(bitPattern: sequences[index]),
                                            event: Array(events[index].readableBytesView), time: times[index]))
            }
        }
        return entries
    }

    /// What is wrong with a journal run as read, or `nil`: its arrays whole and of one length,
    /// its sequences rising and ending at its key `last`, all after the run before (`after`),
    /// so that no entry is replayed twice or out of order.
    static func problem(ofRun last: Int64, whole: Bool, sequences: [Int64], events: Int, times: Int, after: Int64?) -> String? {
        guard whole else { return "has a NULL element" }
        guard sequences.count == events, sequences.count == times else { return "has arrays of different lengths" }
        guard let first = sequences.first else { return "is empty" }
        guard sequences.last == last else { return "ends at sequence \(sequences.last ?? 0), not at its key" }
        guard zip(sequences, sequences.dropFirst()).allSatisfy({ $0 < $1 }) else { return "has sequences that do not rise" }
        if let after, first <= after { return "overlaps the run before it, which ends at \(after)" }
        return nil
    }

    package func deadLetters() throws(StoreError) -> [DeadLetter] {
        try run("""
            SELECT id, address, type, event, "binary", error, crashes, time FROM grove_dead_letters
            WHERE topology = \(topology) AND worker = \(worker) ORDER BY id
            """, doing: "read the dead letters of", Self.deadLetter)
    }

    package func removeDeadLetter(_ id: Int64) throws(StoreError) -> DeadLetter? {
        try run("""
            DELETE FROM grove_dead_letters WHERE id = \(id) AND topology = \(topology) AND worker = \(worker)
            RETURNING id, address, type, event, "binary", error, crashes, time
            """, doing: "remove a dead letter from", Self.deadLetter).first
    }

    package func countCrash(of address: String, event identity: [UInt8], at time: Int64) throws(StoreError) -> Int {
        try run("""
            INSERT INTO grove_crashes (topology, worker, address, event, count, time)
            VALUES (\(topology), \(worker), \(address), \(ByteBuffer(bytes: identity)), 1, \(time))
            ON CONFLICT (topology, worker, address, event) DO UPDATE SET count = grove_crashes.count + 1, time = excluded.time
            RETURNING count
            """, doing: "count a crash in") { row in Int(try row.decode(Int32.self)) }.first ?? 1
    }

    package func forgetCrashes(of address: String, event identity: [UInt8]) throws(StoreError) {
        try run("""
            DELETE FROM grove_crashes
            WHERE topology = \(topology) AND worker = \(worker) AND address = \(address) AND event = \(ByteBuffer(bytes: identity))
            """, doing: "forget crashes in")
    }

    package func crashes() throws(StoreError) -> [CrashCount] {
        try run("""
            SELECT address, event, count, time FROM grove_crashes
            WHERE topology = \(topology) AND worker = \(worker) ORDER BY time, address COLLATE "C"
            """, doing: "read the crashes of") { row in
            let (address, event, count, time) = try row.decode((String, ByteBuffer, Int32, Int64).self)
            return CrashCount(address: address, event: Array(event.readableBytesView), count: Int(count), time: time)
        }
    }

    // MARK: - Helpers

    private func run(_ query: PostgresQuery, doing: String) throws(StoreError) {
        _ = try run(query, doing: doing) { _ in () }
    }

    /// Runs `query` and maps each row; a connection the server closed is opened once more
    /// first (a restarted server), which does not retry a query that reached it.
    private func run<T>(_ query: PostgresQuery, doing: String, _ map: (PostgresRow) throws -> T) throws(StoreError) -> [T] {
        let current = try openConnection()
        do {
            return try current.query(query, logger: logger).wait().rows.map(map)
        } catch {
            throw Self.storeError(error, location: location, doing: doing)
        }
    }

    private func openConnection() throws(StoreError) -> PostgresConnection {
        guard let current = connection.withLock({ $0 }) else {
            throw StoreError("the store at \(location) was closed; open it again", code: .closed)
        }
        guard current.isClosed else { return current }
        let fresh = try Self.connect(location, logger: logger)
        connection.withLock { $0 = fresh }
        return fresh
    }

    private static func deadLetter(_ row: PostgresRow) throws -> DeadLetter {
        let (id, address, type, event, binary, error, crashes, time) =
            try row.decode((Int64, String, String, ByteBuffer, Bool, String, Int32, Int64).self)
        return DeadLetter(id: id, address: address, type: type, event: Array(event.readableBytesView), binary: binary,
                          error: error, crashes: Int(crashes), time: time)
    }

    /// The addresses a `GR002` refusal names in its DETAIL (a JSON array of strings); none
    /// when it names none or cannot be read, which the worker treats as any failed commit.
    static func refusedAddresses(_ detail: String?) -> [String] {
        guard let detail, let addresses = try? JSONDecoder().decode([String].self, from: Data(detail.utf8)) else { return [] }
        return addresses
    }

    /// A ``StoreError`` for `error`, with what to do: Grove's own codes (`GR001` fenced,
    /// `GR002`/`GR003` rejected), the server's refusals of a sign-in, a full disk, and a
    /// server that cannot be reached.
    static func storeError(_ error: any Error, location: PostgresLocation, doing: String) -> StoreError {
        if let error = error as? StoreError { return error }
        guard let psql = error as? PSQLError else {
            return StoreError("cannot \(doing) PostgreSQL at \(location): \(error)")
        }
        let state = psql.serverInfo?[.sqlState] ?? ""
        let message = psql.serverInfo?[.message] ?? String(describing: psql.code)
        switch state {
        case "GR001":
            return StoreError("\(message); this process stops writing (fenced)", code: .fenced)
        case "GR002":
            var refusal = StoreError("\(message); the commit was rolled back (another worker adopted the machine after this one was lost: "
                                     + "handoff; otherwise two topologies with one name in \(location))", code: .rejected)
            refusal.refused = refusedAddresses(psql.serverInfo?[.detail])
            return refusal
        case "GR003", "23505":
            return StoreError("\(message); the commit was rolled back (a Grove bug, or two topologies with one name in \(location))",
                              code: .rejected)
        case "28P01", "28000":
            return StoreError("PostgreSQL at \(location) refused the sign-in: \(message); check the user and the password "
                              + "(durability.postgres.passwordFile or \(PostgresLocation.passwordVariable))", code: .permission)
        case "3D000":
            return StoreError("PostgreSQL at \(location): \(message); create it (createdb -O \(location.user) \(location.database))",
                              code: .failed)
        case "42501":
            return StoreError("PostgreSQL at \(location): \(message); grant the user the right to create tables in the database",
                              code: .permission)
        case "53100":
            return StoreError("PostgreSQL at \(location) is out of disk space: \(message)", code: .full)
        default:
            break
        }
        if psql.serverInfo == nil {
            return StoreError("cannot \(doing) PostgreSQL at \(location): \(psql.code) (\(psql.underlying.map { "\($0)" } ?? "no detail")); "
                              + "is the server running and listening there?")
        }
        return StoreError("cannot \(doing) PostgreSQL at \(location): \(message) (SQLSTATE \(state))")
    }
}
