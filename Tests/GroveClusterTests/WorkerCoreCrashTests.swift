@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// What a worker decides about the event its last process died running: no store, no clock.
@Suite(.timeLimit(.minutes(2)))
struct WorkerCoreCrashTests {
    let core = WorkerCore(worker: "main", coordinator: "ipc://c", machineTypes: ["LedgerMachine"], now: .now)
    let run = RecordedRun(address: "ledger", event: Array(#"{"add":{"_0":1}}"#.utf8), binary: false, origin: .sent)

    @Test func anEventThatWasNotRecordedCannotBeCounted() {
        var unrecorded = run
        unrecorded.event = []
        guard case .unrecorded(let text) = core.crashVerdict(unrecorded) else {
            Issue.record("an event without bytes was counted")
            return
        }
        #expect(text == "the last process of worker main died while ledger ran a sent event that was not recorded "
            + "(too large, or it did not encode); it cannot be quarantined")
    }

    @Test func aRecordedEventIsCountedByItsCodecAndBytes() {
        #expect(core.crashVerdict(run) == .count(identity: [2] + run.event))
        var binary = run
        binary.binary = true
        #expect(core.crashVerdict(binary) == .count(identity: [1] + run.event))
    }

    @Test func oneCrashIsForgivenTheSecondQuarantines() {
        guard case .forgiven(let text) = core.judge(run, crashes: 1, type: "LedgerMachine", now: 7) else {
            Issue.record("one crash quarantined the event: an operator's kill -9 would")
            return
        }
        #expect(text.contains("crash 1 of 2 before that event is quarantined"), "\(text)")
        let judged = core.judge(run, crashes: PoisonWatch.crashesToQuarantine, type: "LedgerMachine", now: 7)
        #expect(judged == .quarantine(DeadLetter(address: "ledger", type: "LedgerMachine", event: run.event, binary: false,
                                                 error: "the worker died while running it, 2 times (a sent event)", crashes: 2, time: 7)))
    }

    @Test func theQuarantineSaysWhatWasTakenOut() {
        #expect(core.quarantined(run, crashes: 2, taken: .fromJournal).hasPrefix(
            "quarantined a sent event of ledger: worker main died running it 2 times; skipped in its journal. "))
        #expect(core.quarantined(run, crashes: 3, taken: .fromRecord).contains("3 times; taken out of its stored record. "))
        #expect(core.quarantined(run, crashes: 2, taken: .nothing).contains("2 times. The machine continues"))
    }
}
