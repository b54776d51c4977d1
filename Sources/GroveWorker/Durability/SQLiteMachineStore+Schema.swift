import GRDB

extension SQLiteMachineStore {
    /// The store's tables, one migration per format change. A database holding a migration this
    /// list lacks was written by a newer Grove, and is refused rather than misread.
    ///
    /// - `machines`: one row per instance, replaced in place (`ON CONFLICT DO UPDATE`). A rowid
    ///   table: snapshots can be large, and SQLite keeps large rows better out of the key's tree.
    /// - `journal`: in append order (v3; v1 kept it in `(address, sequence)` order, which made a
    ///   commit of events to many machines write as many pages). A commit's events sit on a few
    ///   contiguous pages; ``JournalBook`` knows where each machine's live entries are, and rows
    ///   no machine needs are deleted from the table's old end.
    /// - `dead_letters`: AUTOINCREMENT, so that an id an admin was shown is never given to
    ///   another event after it was dropped.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE machines (
                    address TEXT NOT NULL PRIMARY KEY,
                    type TEXT NOT NULL,
                    snapshot BLOB NOT NULL,
                    sequence INTEGER NOT NULL
                );
                CREATE TABLE journal (
                    address TEXT NOT NULL,
                    sequence INTEGER NOT NULL,
                    event BLOB NOT NULL,
                    time INTEGER NOT NULL,
                    PRIMARY KEY (address, sequence)
                ) WITHOUT ROWID;
                CREATE TABLE dead_letters (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    address TEXT NOT NULL,
                    type TEXT NOT NULL,
                    event BLOB NOT NULL,
                    binary INTEGER NOT NULL,
                    error TEXT NOT NULL,
                    crashes INTEGER NOT NULL,
                    time INTEGER NOT NULL
                );
                """)
        }
        // v2: the deaths of the worker counted against an event (poison events), kept until
        // the event is quarantined or runs to the end.
        migrator.registerMigration("v2") { db in
            try db.execute(sql: """
                CREATE TABLE crashes (
                    address TEXT NOT NULL,
                    event BLOB NOT NULL,
                    count INTEGER NOT NULL,
                    time INTEGER NOT NULL,
                    PRIMARY KEY (address, event)
                ) WITHOUT ROWID;
                """)
        }
        // v3: the journal in append order (see above); v1's rows move over in their order.
        migrator.registerMigration("v3") { db in
            try db.execute(sql: """
                CREATE TABLE journal_in_order (
                    position INTEGER PRIMARY KEY,
                    address TEXT NOT NULL,
                    sequence INTEGER NOT NULL,
                    event BLOB NOT NULL,
                    time INTEGER NOT NULL
                );
                INSERT INTO journal_in_order (address, sequence, event, time)
                    SELECT address, sequence, event, time FROM journal ORDER BY address, sequence;
                DROP TABLE journal;
                ALTER TABLE journal_in_order RENAME TO journal;
                """)
        }
        // v4: the answers of idempotency keys each instance keeps (``AnswerWindow``), written
        // in the commit of the state they report.
        migrator.registerMigration("v4") { db in
            try db.execute(sql: """
                CREATE TABLE answers (
                    address TEXT NOT NULL,
                    client BLOB NOT NULL,
                    sequence INTEGER NOT NULL,
                    slot INTEGER NOT NULL,
                    kind INTEGER NOT NULL,
                    flags INTEGER NOT NULL,
                    payload BLOB NOT NULL,
                    PRIMARY KEY (address, client, sequence)
                ) WITHOUT ROWID;
                """)
        }
        // v5: the records that must run at start, indexed (issue 37): all but those holding only
        // their state (``MachineRecord/holdsOnlyState``, the first byte 3), which a passivating
        // machine's keyed instances leave in the store until their next message. Files of
        // before open as they were; the index is built once, at the first open.
        migrator.registerMigration("v5") { db in
            try db.execute(sql: "CREATE INDEX machines_to_run ON machines (address) WHERE \(SQL.toRun)")
        }
        return migrator
    }

    enum SQL {
        static let deleteJournal = "DELETE FROM journal WHERE position < ?"
        static let removeRecord = "DELETE FROM machines WHERE address = ?"
        static let insertDeadLetter = """
            INSERT INTO dead_letters (address, type, event, binary, error, crashes, time) VALUES (?, ?, ?, ?, ?, ?, ?)
            """
        static let records = "SELECT address, type, snapshot, sequence FROM machines ORDER BY address"
        /// A record that does not hold only its state, its first byte not 3 (an empty one too):
        /// the condition of the index `machines_to_run`; and one that does.
        static let toRun = "(snapshot < x'03' OR snapshot >= x'04')"
        static let rests = "(snapshot >= x'03' AND snapshot < x'04')"
        /// Every record to run at start through the index, then the others outside the keyed
        /// ranges of the resting machines (`gaps` conditions on `address`, through the primary key).
        static func records(outside gaps: Int) -> String {
            let outside = (0..<gaps).map { _ in "(address >= ? AND address < ?)" }.joined(separator: " OR ")
            return """
                SELECT address, type, snapshot, sequence FROM machines WHERE \(toRun)
                UNION ALL SELECT address, type, snapshot, sequence FROM machines WHERE \(rests) AND (\(outside))
                ORDER BY address
                """
        }
        static let keyedInstances = "SELECT address, type FROM machines WHERE address >= ? AND address < ? ORDER BY address"
        static let record = "SELECT address, type, snapshot, sequence FROM machines WHERE address = ?"
        static let journalRows = "SELECT position, address, sequence FROM journal ORDER BY position"
        static let recordSequences = "SELECT address, sequence FROM machines"
        static let deadLetters = "SELECT id, address, type, event, binary, error, crashes, time FROM dead_letters ORDER BY id"
        static let deadLetter = "SELECT id, address, type, event, binary, error, crashes, time FROM dead_letters WHERE id = ?"
        static let removeDeadLetter = "DELETE FROM dead_letters WHERE id = ?"
        static let countCrash = """
            INSERT INTO crashes (address, event, count, time) VALUES (?, ?, 1, ?)
            ON CONFLICT (address, event) DO UPDATE SET count = count + 1, time = excluded.time
            RETURNING count
            """
        static let forgetCrashes = "DELETE FROM crashes WHERE address = ? AND event = ?"
        static let crashes = "SELECT address, event, count, time FROM crashes ORDER BY time"
        static let upsertAnswer = """
            INSERT INTO answers (address, client, sequence, slot, kind, flags, payload) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (address, client, sequence) DO UPDATE SET slot = excluded.slot, kind = excluded.kind,
                flags = excluded.flags, payload = excluded.payload
            """
        static let forgetAnswer = "DELETE FROM answers WHERE address = ? AND client = ? AND sequence = ?"
        static let removeAnswers = "DELETE FROM answers WHERE address = ?"
        static let answers = "SELECT client, sequence, slot, kind, flags, payload FROM answers WHERE address = ?"
    }
}
