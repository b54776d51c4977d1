@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// What a worker sends the coordinator, by size (``OutboundLimit``): decided without a socket.
@Suite(.timeLimit(.minutes(2))) struct OutboundLimitTests {
    @Test func aStateReplyOverTheLimitIsAnsweredReplyTooLargeSayingWhatHappened() throws {
        var limit = OutboundLimit(messageBytes: 8192)
        let decision = limit.check(.state, address: "nav/a", payloadBytes: 9000)
        guard case .replace(let kind, let payload) = decision.verdict else {
            Issue.record("a state reply of 9000 bytes under a limit of 8192: \(decision.verdict)")
            return
        }
        #expect(kind == .error)
        let error = try WireJSON.decode(WireError.self, from: payload)
        #expect(error.code == .replyTooLarge)
        #expect(error.address == "nav/a")
        #expect(error.message.contains("the state of nav/a is 9000 bytes encoded"), "\(error.message)")
        #expect(error.message.contains("over limits.messageBytes 8192"), "\(error.message)")
        #expect(error.message.contains("committed"), "the client must learn the event ran: \(error.message)")
        #expect(error.message.contains("raise limits.messageBytes"), "\(error.message)")
        let warning = try #require(decision.warning)
        #expect(warning.contains("nav/a") && warning.contains("9000 bytes"), "\(warning)")
    }

    @Test func aReplyThatFitsIsSentAndTheEnvelopeCounts() {
        var limit = OutboundLimit(messageBytes: 8192)
        // 16 + 5 + 8171 = 8192: exactly the limit.
        #expect(limit.check(.state, address: "nav/a", payloadBytes: 8171) == .init(verdict: .send))
        #expect(limit.check(.state, address: "nav/a", payloadBytes: 8172).verdict != .send)
    }

    @Test func eachAddressIsLoggedOnceAndOthersStillAre() {
        var limit = OutboundLimit(messageBytes: 4096)
        #expect(limit.check(.state, address: "nav/a", payloadBytes: 5000).warning != nil)
        let again = limit.check(.state, address: "nav/a", payloadBytes: 6000)
        #expect(again.warning == nil)
        guard case .replace = again.verdict else { Issue.record("not answered the second time: \(again.verdict)"); return }
        #expect(limit.check(.state, address: "nav/b", payloadBytes: 5000).warning != nil)
        #expect(limit.check(.stateChanged, address: "nav/a", payloadBytes: 5000).warning != nil, "another kind, said once too")
    }

    @Test func publicationsAndOutputsTooLargeAreDroppedAndSaid() {
        var limit = OutboundLimit(messageBytes: 4096)
        for kind in [MessageKind.stateChanged, .output] {
            let decision = limit.check(kind, address: "nav/a", payloadBytes: 5000)
            #expect(decision.verdict == .drop, "\(kind.name)")
            #expect(decision.warning?.contains("was not sent") == true, "\(kind.name): \(decision.warning ?? "no warning")")
        }
    }

    @Test func anIOResultTooLargeBecomesAFailedResult() throws {
        var limit = OutboundLimit(messageBytes: 4096)
        let decision = limit.check(.ioResult, address: "nav/a", payloadBytes: 5000)
        guard case .replace(.ioResult, let payload) = decision.verdict else { Issue.record("\(decision.verdict)"); return }
        let failure = try #require(try IOCallResult.failure(in: payload))
        #expect(failure.code == "reply-too-large")
    }

    @Test func underAVeryLowLimitEvenTheErrorIsDroppedNotSent() {
        var limit = OutboundLimit(messageBytes: 64)
        let decision = limit.check(.state, address: "nav/a", payloadBytes: 100)
        #expect(decision.verdict == .drop)
        #expect(decision.warning?.contains("even an error") == true, "\(decision.warning ?? "")")
    }

    @Test func aBatchOfManySmallRepliesIsCutBelowTheLimit() {
        let limit = OutboundLimit(messageBytes: 8192)
        var batches: [Int] = []
        var bytes = 0
        for _ in 0 ..< 200 {
            let envelope = OutboundLimit.envelopeBytes(address: 5, payload: 300)
            if limit.startsNewBatch(at: bytes, adding: envelope) {
                batches.append(bytes)
                bytes = 0
            }
            bytes += envelope
        }
        batches.append(bytes)
        #expect(batches.count > 1)
        #expect(batches.allSatisfy { $0 <= 8192 }, "\(batches)")
        #expect(!limit.startsNewBatch(at: 0, adding: 9000), "an envelope alone never waits for an empty batch")
    }

    @Test func theBatchBuilderGivesBackItsLastEnvelope() throws {
        var batch = BatchBuilder()
        batch.append(kind: .state, flags: [], correlation: 1, address: Array("a".utf8), payload: Array("{}".utf8))
        let start = batch.byteCount
        batch.append(kind: .state, flags: [], correlation: 2, address: Array("b".utf8), payload: Array("[1]".utf8))
        let moved = batch.removeLast(startingAt: start)
        #expect(batch.count == 1)
        var other = BatchBuilder()
        other.append(envelopes: moved, count: 1)
        let message = try #require(try Batch.unpack(other.payload).first)
        #expect(message.header.correlation == 2 && message.address == "b")
    }

    @Test func theWelcomeCarriesTheCoordinatorsLimitToTheCore() throws {
        var core = WorkerCore(worker: "main", coordinator: "inproc://w", machineTypes: ["AppNavigator"], now: .now)
        let welcome = Welcome(machines: [], remoteIO: ["fetch"], heartbeatIntervalMs: 1000, heartbeatTimeoutMs: 3000,
                              mailboxCapacity: 10, incarnation: core.incarnation.id, messageBytes: 8192)
        _ = core.welcome(try WireJSON.encode(welcome), now: .now)
        #expect(core.messageBytes == 8192)
        // An io request the coordinator would refuse fails at once instead of costing the connection.
        let (call, action) = core.startCall(address: "nav/a", payload: Array(repeating: 0, count: 9000), binary: false, cancelled: false)
        guard case .resume(call, .failure(let failure)) = action else { Issue.record("\(action)"); return }
        #expect(failure.code == "oversized")
        #expect(failure.message.contains("limits.messageBytes 8192"), "\(failure.message)")
        #expect(core.calls.isEmpty)
    }

    @Test func instanceReportsAreCutToFitTheLimit() throws {
        let addresses = (0 ..< 900).map { "nav/key-\($0)" }
        let reports = InstancesReport.reports(for: addresses, maxBytes: 8192)
        #expect(reports.count > 1)
        for report in reports { #expect(try WireJSON.encode(report).count + 16 + 1024 <= 8192) }
        #expect(reports.flatMap(\.instances).count == 900)
    }
}
