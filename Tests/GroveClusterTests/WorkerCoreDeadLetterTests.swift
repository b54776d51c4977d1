import Foundation
@testable import GroveCluster
@testable import GroveWorker
import GroveWire
import Testing

/// An admin's `dead-letters` request and a removed instance's dead letters: ``WorkerCore``'s
/// answers from what a store returned, with no store, socket or thread.
@Suite(.timeLimit(.minutes(2)))
struct WorkerCoreDeadLetterTests {
    let core = WorkerCore(worker: "main", coordinator: "ipc://c", machineTypes: ["LedgerMachine"], now: .now)
    let letter = DeadLetter(id: 3, address: "ledger/7", type: "LedgerMachine", event: Array(#"{"add":{"_0":1}}"#.utf8), binary: false,
                            error: "the worker died while running it, 2 times (a sent event)", crashes: 2, time: 7)
    let codec = StubEventCodec(redactedJSON: .object(["login": .string("<redacted>")]), json: .object(["login": .string("hunter2")]))

    func codecs(_ type: String) -> (any StoredEventCodec)? { type == "LedgerMachine" ? codec : nil }

    @Test func dropAndRetryNeedAnId() throws {
        #expect(core.deadLetterRead(DeadLetterRequest(.list)) == .list)
        #expect(core.deadLetterRead(DeadLetterRequest(.drop, id: 3)) == .remove(3))
        #expect(core.deadLetterRead(DeadLetterRequest(.retry, id: 4)) == .remove(4))
        for action in [DeadLetterRequest.Action.drop, .retry] {
            guard case .refuse(let error) = core.deadLetterRead(DeadLetterRequest(action)) else {
                Issue.record("a \(action) without an id went to the store")
                continue
            }
            #expect(error.code == .malformedJSON)
            #expect(error.message == "a dead-letters \(action.rawValue) needs the id of a dead letter: {\"action\":\"\(action.rawValue)\",\"id\":3}")
        }
    }

    @Test func theListShowsEventsRedactedAndSaysWhichDoNotDecode() throws {
        var foreign = letter
        foreign.id = nil
        foreign.type = "Gone"
        foreign.event = [1, 2, 3, 4]
        let actions = core.listing([letter, foreign], codec: codecs)
        guard actions.count == 1, case .list(let payload) = actions[0] else {
            Issue.record("not one list: \(actions)")
            return
        }
        let list = try WireJSON.decode(DeadLetterList.self, from: payload, what: "the list")
        #expect(list == DeadLetterList(worker: "main", deadLetters: [
            .init(id: 3, address: "ledger/7", type: "LedgerMachine", event: .object(["login": .string("<redacted>")]),
                  error: letter.error, crashes: 2, time: 7),
            .init(id: 0, address: "ledger/7", type: "Gone", event: .string("(4 bytes that do not decode as a Gone event)"),
                  error: letter.error, crashes: 2, time: 7),
        ]))
        let empty = core.listing([], codec: codecs)
        guard case .list(let none) = empty.first else {
            Issue.record("no list for no dead letters: \(empty)")
            return
        }
        #expect(try WireJSON.decode(DeadLetterList.self, from: none, what: "the list").deadLetters.isEmpty)
    }

    @Test func anUnknownIdIsRefusedWithWhatToDo() {
        let actions = core.removed(nil, id: 9, by: DeadLetterRequest(.drop, id: 9), codec: codecs)
        guard actions.count == 1, case .fail(let error) = actions[0] else {
            Issue.record("\(actions)")
            return
        }
        #expect(error.code == .unknownDeadLetter)
        #expect(error.message == "worker main has no dead letter 9 (dropped or retried already?); list them with `fsm-send dead-letters`")
    }

    @Test func aDropReleasesTheEventAndIsAccepted() {
        #expect(core.removed(letter, id: 3, by: DeadLetterRequest(.drop, id: 3), codec: codecs) == [
            .release(3), .log(.notice, "dead letter main:3 of ledger/7 dropped by an admin"), .accept,
        ])
    }

    @Test func aRetryDeliversTheEventUnredactedAsJSON() {
        let json = Array(JSONValue.object(["login": .string("hunter2")]).jsonData)
        #expect(core.removed(letter, id: 3, by: DeadLetterRequest(.retry, id: 3), codec: codecs) == [
            .release(3), .log(.notice, "dead letter main:3 of ledger/7 retried by an admin"), .deliver(json, address: "ledger/7"),
        ])
    }

    @Test func aRetryOfAnEventThatNoLongerDecodesSaysItWasRemoved() {
        var foreign = letter
        foreign.type = "Gone"
        let actions = core.removed(foreign, id: 3, by: DeadLetterRequest(.retry, id: 3), codec: codecs)
        #expect(actions.prefix(2) == [.release(3), .log(.notice, "dead letter main:3 of ledger/7 retried by an admin")],
                "removed from the store: it is not refused any more")
        guard actions.count == 3, case .fail(let error) = actions[2] else {
            Issue.record("\(actions)")
            return
        }
        #expect(error.code == .undecodableEvent && error.address == "ledger/7")
        #expect(error.message == "dead letter main:3 no longer decodes as a Gone event; it was removed")
    }

    @Test func aStoreThatFailsAnswersUnavailable() {
        let actions = core.deadLettersUnavailable(StoreError("disk I/O error", code: .failed))
        guard actions.count == 1, case .fail(let error) = actions[0] else {
            Issue.record("\(actions)")
            return
        }
        #expect(error.code == .unavailable && error.message == "worker main cannot read its store: disk I/O error")
    }

    @Test func aRemovedInstanceTakesItsOwnDeadLettersOnly() {
        var other = letter
        other.id = 4
        other.address = "ledger/8"
        var unstored = letter
        unstored.id = nil
        #expect(core.deadLetters(droppedWith: "ledger/7", from: [letter, other, unstored]) == [3])
        #expect(core.droppedWithInstance(3, address: "ledger/7").hasPrefix("dead letter main:3 of ledger/7 dropped with its instance"))
        #expect(core.dropFailed(at: "ledger/7", StoreError("locked")).contains("ledger/7: locked; they still refuse its events"))
    }
}
