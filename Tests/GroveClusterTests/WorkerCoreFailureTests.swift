@testable import GroveCluster
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Logging
import Testing

/// Which failure the runtime meets ends the worker, with which reason and status, and which is
/// only logged: ``WorkerCore/failed(_:)``, fed failures with no store, log, thread or clock. And
/// what a crash count left in the store says when it opens (``WorkerCore/storedCrash(_:deadLetters:)``):
/// a quarantine whose commit failed is finished before its event can run a third time.
@Suite(.timeLimit(.minutes(2)))
struct WorkerCoreFailureTests {
    let core = WorkerCore(worker: "edge", coordinator: "ipc:///run/test/workers", machineTypes: [], now: .now)

    func exit(_ failure: WorkerFailure) -> WorkerExitReason? {
        let actions = core.failed(failure)
        guard actions.count == 1, case .exit(let reason) = actions[0] else { return nil }
        return reason
    }

    @Test func whatLosesAPromiseEndsTheWorkerForARestart() {
        // A commit, a journal, an audit line or a quarantine that is not stored: the supervisor
        // restarts the worker from what the store holds (74).
        #expect(exit(.storeWrite("disk full")) == .storeWriteFailed(worker: "edge", "disk full"))
        #expect(exit(.journalRead(address: "ledger/a", "corrupt")) == .journalUnreadable(worker: "edge", address: "ledger/a", "corrupt"))
        #expect(exit(.auditWrite("EIO")) == .auditWriteFailed(worker: "edge", "EIO"))
        #expect(exit(.quarantineWrite(address: "ledger", "locked")) == .quarantineUnwritten(worker: "edge", address: "ledger", "locked"))
        for failure in [WorkerFailure.storeWrite(""), .journalRead(address: "a", ""), .auditWrite(""), .quarantineWrite(address: "a", "")] {
            #expect(exit(failure)?.status == .storage, "\(failure)")
        }
    }

    @Test func whatCannotBeOpenedIsAConfigurationErrorNotRestarted() {
        #expect(exit(.noStore) == .noDataDirectory(worker: "edge"))
        #expect(exit(.storeOpen("not a database")) == .storeUnusable(worker: "edge", "not a database"))
        #expect(exit(.auditOpen("permission denied")) == .auditLogUnusable(worker: "edge", "permission denied"))
        for failure in [WorkerFailure.noStore, .storeOpen(""), .auditOpen("")] {
            #expect(exit(failure)?.status == .configuration, "\(failure)")
            #expect(exit(failure)?.status.isFinal == true)
        }
    }

    @Test func whatOnlyWeakensPoisonDetectionIsLoggedAndTheWorkerServesOn() {
        let logged: [(WorkerFailure, Logger.Level, String)] = [
            (.recorderOpen("ENOSPC"), .error, "worker edge cannot open its flight recorder"),
            (.crashCount("busy"), .error, "worker edge could not count a crash in its store: busy"),
            (.crashForget("busy"), .warning, "worker edge could not forget a crash in its store: busy"),
            (.poisonUnreadable("busy"), .error, "quarantined events are not refused"),
        ]
        for (failure, level, text) in logged {
            let actions = core.failed(failure)
            guard actions.count == 1, case .log(let said, let line) = actions[0] else {
                Issue.record("\(failure): \(actions)")
                continue
            }
            #expect(said == level, "\(failure)")
            #expect(line.contains(text), "\(line)")
        }
    }

    @Test func aRecordThatDoesNotReadIsLoggedAndTheWorkerServesItsOtherMachines() {
        // One unreadable record is that instance's problem: a restart would read the same bytes.
        let actions = core.failed(.recordUnreadable(address: "ledger/a", message: "worker edge cannot read what the SQLite store holds"))
        guard actions.count == 1, case .log(let level, let line) = actions[0] else {
            Issue.record("not one log line: \(actions)")
            return
        }
        #expect(level == .error)
        #expect(line == "worker edge cannot read what the SQLite store holds")
    }

    @Test func anUnwrittenQuarantineSaysTheEventIsNotRunAgainAndWhatTheNextStartDoes() throws {
        let reason = try #require(exit(.quarantineWrite(address: "ledger", "database is locked")))
        #expect(reason.message.contains("worker edge could not quarantine the event that crashed it twice at ledger: database is locked"))
        #expect(reason.message.contains("next process quarantines the event from the crash count in the store"), "\(reason.message)")
    }

    // MARK: - storedCrash

    static let event = Array(#"{"add":{"_0":13}}"#.utf8)
    static let identity = [RecordedRun.codecByte(binary: false)] + event

    @Test func aCountUnderTheThresholdIsASuspect() {
        let crash = CrashCount(address: "ledger", event: Self.identity, count: PoisonWatch.crashesToQuarantine - 1, time: 1)
        #expect(core.storedCrash(crash, deadLetters: []) == .suspect)
    }

    @Test func aCountAtTheThresholdWithoutItsDeadLetterIsAQuarantineToFinish() {
        let crash = CrashCount(address: "ledger", event: Self.identity, count: PoisonWatch.crashesToQuarantine, time: 1)
        let elsewhere = DeadLetter(address: "other", type: "LedgerMachine", event: Self.event, binary: false, error: "", crashes: 2, time: 1)
        let expected = RecordedRun(address: "ledger", event: Self.event, binary: false, origin: .unknown)
        #expect(core.storedCrash(crash, deadLetters: [elsewhere]) == .quarantine(expected))
        #expect(expected.identity == Self.identity, "the event rebuilt from the count is the one counted")

        let binary = CrashCount(address: "ledger", event: [RecordedRun.codecByte(binary: true), 9, 9], count: 3, time: 1)
        guard case .quarantine(let run) = core.storedCrash(binary, deadLetters: []) else {
            Issue.record("a count over the threshold is not quarantined")
            return
        }
        #expect(run.binary && run.event == [9, 9])
    }

    @Test func aCountAtTheThresholdWithItsDeadLetterIsForgotten() {
        let crash = CrashCount(address: "ledger", event: Self.identity, count: 2, time: 1)
        let letter = DeadLetter(address: "ledger", type: "LedgerMachine", event: Self.event, binary: false, error: "", crashes: 2, time: 1)
        #expect(core.storedCrash(crash, deadLetters: [letter]) == .forget)
    }
}
