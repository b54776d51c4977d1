import Foundation
import GroveCluster
import GroveClient
import GroveCoordinator
import GroveWorker
import GroveTestSupport
import GroveWire
import Synchronization
import Testing
import ZeroMQ

/// A coordinator stand-in: a ROUTER on its own thread that answers each request with the next
/// scripted reply (the last one repeats) and counts the requests it saw.
private final class ScriptedCoordinator: Sendable {
    let endpoint = privateSocketEndpoint("client-test")
    private let seen = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    var requests: Int { seen.load(ordering: .acquiring) }

    init(replies: [(kind: MessageKind, payload: [UInt8])]) throws {
        let ready = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        // A socket belongs to one thread: made, used and closed on the coordinator's own.
        let thread = Thread { [self] in
            do {
                let context = try ZMQContext()
                let socket = try Socket(context, .router)
                try socket.setLinger(milliseconds: 0)
                try socket.setReceiveTimeout(milliseconds: 20)
                try socket.bind(self.endpoint)
                ready.signal()
                while !self.stopped.load(ordering: .acquiring) {
                    guard let frames = try? socket.receive(dontWait: false), frames.count == 4,
                          let request = try? WireMessage(frames: frames.dropFirst()) else { continue }
                    let index = self.seen.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
                    let reply = replies[min(index, replies.count - 1)]
                    let message = WireMessage(Header(reply.kind, correlation: request.header.correlation), address: request.address,
                                              payload: reply.payload)
                    _ = try? socket.send([frames[0]] + message.frames, dontWait: false)
                }
                socket.close()
                context.terminate()
            } catch {
                failure.withLock { $0 = "\(error)" }
                ready.signal()
            }
            self.done.signal()
        }
        thread.start()
        ready.wait()
        if let failure = failure.withLock({ $0 }) { throw HarnessFailure(message: failure) }
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
        done.wait()
        if let directory = LocalEndpoint(endpoint).directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    static func error(_ code: WireError.Code) -> (kind: MessageKind, payload: [UInt8]) {
        (.error, WireError(code, "scripted \(code.rawValue)").payload)
    }
}

private struct HarnessFailure: Error { var message: String }

/// Sends one increment from a `Client`, which blocks on its socket and sleeps between retries.
private func sendIncrement(to endpoint: String, timeout: Duration, retryUnavailable: Bool) -> Result<[UInt8], WireError> {
    Result { () throws(WireError) -> [UInt8] in
        let client = try Client(endpoint: endpoint, timeout: timeout, retryUnavailable: retryUnavailable)
        return try client.send(Array(#""increment""#.utf8), to: "counter/1")
    }
}

/// `Client`'s `retryUnavailable`: only `unavailable` is resent, and never past the timeout.
/// Counts of requests are asserted, never durations (`Scripts/pacing.sh` prints how many fit in
/// 300 ms). `.ownThread`: the client and the stand-in's semaphores block.
@Suite("Client retries", .timeLimit(.minutes(2)), .ownThread)
struct ClientRetryTests {
    @Test func unavailableIsResentUntilTheMachineAnswers() throws {
        let coordinator = try ScriptedCoordinator(replies: [ScriptedCoordinator.error(.unavailable), ScriptedCoordinator.error(.unavailable),
                                                            (.state, Array(#"{"count":1}"#.utf8))])
        defer { coordinator.stop() }
        let state = try sendIncrement(to: coordinator.endpoint, timeout: .seconds(10), retryUnavailable: true).get()
        #expect(state == Array(#"{"count":1}"#.utf8))
        #expect(coordinator.requests == 3)
    }

    @Test func withoutRetryUnavailableIsThrownAtOnce() throws {
        let coordinator = try ScriptedCoordinator(replies: [ScriptedCoordinator.error(.unavailable), (.state, Array("{}".utf8))])
        defer { coordinator.stop() }
        let result = sendIncrement(to: coordinator.endpoint, timeout: .seconds(10), retryUnavailable: false)
        let error = #expect(throws: WireError.self) { try result.get() }
        #expect(error?.code == .unavailable)
        #expect(coordinator.requests == 1)
    }

    @Test func otherErrorsAreNeverResent() throws {
        for code in [WireError.Code.busy, .mailboxFull, .machineEnded, .undecodableEvent] {
            let coordinator = try ScriptedCoordinator(replies: [ScriptedCoordinator.error(code), (.state, Array("{}".utf8))])
            defer { coordinator.stop() }
            let result = sendIncrement(to: coordinator.endpoint, timeout: .seconds(10), retryUnavailable: true)
            let error = #expect(throws: WireError.self) { try result.get() }
            #expect(error?.code == code)
            #expect(coordinator.requests == 1, "\(code.rawValue) was resent")
        }
    }

    /// A machine that stays unavailable: the client retries (the message says so, which it
    /// does only after a retry) and gives up with the last `unavailable` once the timeout has
    /// passed. The timeout is far longer than a round trip, so the first answer always comes
    /// before it; how many retries fit in it is a matter of pace, not asserted.
    @Test func retryingStopsAtTheTimeoutWithTheLastUnavailable() throws {
        let coordinator = try ScriptedCoordinator(replies: [ScriptedCoordinator.error(.unavailable)])
        defer { coordinator.stop() }
        let result = sendIncrement(to: coordinator.endpoint, timeout: .seconds(2), retryUnavailable: true)
        let error = #expect(throws: WireError.self) { try result.get() }
        #expect(error?.code == .unavailable)
        #expect(coordinator.requests > 1)
        #expect(error?.message.contains("still unavailable after retrying for 2.0 seconds: \(coordinator.requests) requests") == true,
                "\(error?.message ?? "")")
    }
}
