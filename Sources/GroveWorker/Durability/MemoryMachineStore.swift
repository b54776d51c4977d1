import GroveWire
import Synchronization

/// A ``MachineStore`` in memory, with the semantics of ``SQLiteMachineStore`` (the same order of
/// a commit's parts, all or nothing, a journal entry written twice refused), for tests of the
/// code that uses a store. Nothing survives the process.
///
/// ```swift
/// let store = MemoryMachineStore()
/// store.failure = StoreError("disk full", code: .full)   // every commit fails until cleared
/// ```
package final class MemoryMachineStore: MachineStore {
    private struct Contents {
        var records: [String: MachineRecord] = [:]
        var journals: [String: [UInt64: JournalEntry]] = [:]
        var deadLetters: [DeadLetter] = []
        var nextDeadLetter: Int64 = 1
        var crashes: [CrashCount] = []
        var answers: [String: [IdempotencyKey: AnswerEntry]] = [:]
    }

    private let contents = Mutex(Contents())
    private let injected = Mutex<StoreError?>(nil)
    private let commitCount = Mutex(0)

    package init() {}

    package var label: String { "the in-memory store" }

    /// While set, every ``commit(_:)`` throws it and changes nothing: a full disk, say.
    package var failure: StoreError? {
        get { injected.withLock { $0 } }
        set { injected.withLock { $0 = newValue } }
    }

    /// How many commits succeeded (empty ones are not counted).
    package var commits: Int { commitCount.withLock { $0 } }

    package func records() throws(StoreError) -> [MachineRecord] {
        contents.withLock { $0.records.values.sorted { $0.address < $1.address } }
    }

    package func record(of address: String) throws(StoreError) -> MachineRecord? {
        contents.withLock { $0.records[address] }
    }

    package func journal(of address: String, after sequence: UInt64) throws(StoreError) -> [JournalEntry] {
        contents.withLock { contents in
            (contents.journals[address] ?? [:]).values.filter { $0.sequence > sequence }.sorted { $0.sequence < $1.sequence }
        }
    }

    package func answers(of address: String) throws(StoreError) -> [AnswerEntry] {
        contents.withLock { Array(($0.answers[address] ?? [:]).values) }
    }

    package func commit(_ commit: StoreCommit) throws(StoreError) {
        guard !commit.isEmpty else { return }
        if let failure { throw failure }
        try contents.withLock { (contents: inout Contents) throws(StoreError) in
            var next = contents
            for address in commit.removed {
                next.records[address] = nil
                next.journals[address] = nil
                next.answers[address] = nil
            }
            for record in commit.records { next.records[record.address] = record }
            for entry in commit.journal {
                guard next.journals[entry.address]?[entry.sequence] == nil else {
                    throw StoreError("journal entry \(entry.sequence) of \(entry.address) written twice", code: .rejected)
                }
                next.journals[entry.address, default: [:]][entry.sequence] = entry
            }
            for (address, through) in commit.truncations {
                next.journals[address] = next.journals[address]?.filter { $0.key > through }
            }
            for var letter in commit.deadLetters {
                letter.id = next.nextDeadLetter
                next.nextDeadLetter += 1
                next.deadLetters.append(letter)
            }
            for (address, key) in commit.forgottenAnswers { next.answers[address]?[key] = nil }
            for (address, entry) in commit.answers { next.answers[address, default: [:]][entry.key] = entry }
            contents = next
        }
        commitCount.withLock { $0 += 1 }
    }

    package func deadLetters() throws(StoreError) -> [DeadLetter] {
        contents.withLock { $0.deadLetters }
    }

    package func removeDeadLetter(_ id: Int64) throws(StoreError) -> DeadLetter? {
        contents.withLock { contents in
            guard let index = contents.deadLetters.firstIndex(where: { $0.id == id }) else { return nil }
            return contents.deadLetters.remove(at: index)
        }
    }

    package func countCrash(of address: String, event identity: [UInt8], at time: Int64) throws(StoreError) -> Int {
        contents.withLock { contents in
            if let index = contents.crashes.firstIndex(where: { $0.address == address && $0.event == identity }) {
                contents.crashes[index].count += 1
                contents.crashes[index].time = time
                return contents.crashes[index].count
            }
            contents.crashes.append(CrashCount(address: address, event: identity, count: 1, time: time))
            return 1
        }
    }

    package func forgetCrashes(of address: String, event identity: [UInt8]) throws(StoreError) {
        contents.withLock { $0.crashes.removeAll { $0.address == address && $0.event == identity } }
    }

    package func crashes() throws(StoreError) -> [CrashCount] {
        contents.withLock { $0.crashes }
    }
}
