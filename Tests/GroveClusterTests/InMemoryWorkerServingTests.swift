@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveExamples
import GroveRuntime
@_spi(GroveInternal) import GroveWire
import Testing

/// A real worker runtime serving other workers' `FetchItems` calls, with the coordinator played
/// by the test and no socket: an `io-cancel` is answered with `io-cancelled` only once the
/// handler's task has ended, never on receipt.
@Suite(.timeLimit(.minutes(2)))
struct InMemoryWorkerServingTests {
    static let welcome = Welcome(machines: [], remoteIO: [], heartbeatIntervalMs: 250, heartbeatTimeoutMs: 60_000, mailboxCapacity: 100)

    /// A welcomed worker whose `FetchItems` handler holds every call until the test answers it.
    static func servingWorker() async throws -> (InMemoryWorker, InMemoryWorkerCallTests.Outbox, PendingCalls<FetchItems>) {
        let fetches = PendingCalls<FetchItems>()
        var configuration = WorkerConfiguration()
        configuration.io.register(FetchItems.self) { try await fetches.handle($0) }
        let worker = try InMemoryWorker(name: "data", configuration: configuration)
        let outbox = InMemoryWorkerCallTests.Outbox(worker: worker)
        worker.start()
        worker.deliver([WireMessage(Header(.welcome), payload: try WireJSON.encode(welcome)).frames])
        _ = try outbox.take("the registration") { $0.header.kind == .register }
        return (worker, outbox, fetches)
    }

    static func request(_ call: UInt64) throws -> [[UInt8]] {
        var payload: [UInt8] = []
        try IOCallHead.write(name: "FetchItems", effect: Array(#""fetch-items""#.utf8), into: &payload)
        payload += Array(#"{"forceRefresh":false}"#.utf8)
        return WireMessage(Header(.ioRequest, correlation: call), address: "loader/a", payload: payload).frames
    }

    static func cancel(_ call: UInt64) -> [[UInt8]] {
        WireMessage(Header(.ioCancel, correlation: call), address: "loader/a").frames
    }

    /// Waits until everything delivered so far has been handled: an echo's `accepted` leaves
    /// after whatever the messages delivered before it made the worker send at once.
    static func barrier(_ worker: InMemoryWorker, _ outbox: InMemoryWorkerCallTests.Outbox, _ correlation: UInt64) async throws {
        worker.deliver([WireMessage(Header(.echo, correlation: correlation), address: "loader/a").frames])
        _ = try outbox.take("the echo's reply") { $0.header.kind == .accepted && $0.header.correlation == correlation }
    }

    @Test func aCancelledCallIsAnsweredOnlyOnceItsTaskHasEnded() async throws {
        let (worker, outbox, fetches) = try await Self.servingWorker()
        defer { worker.stop() }
        worker.deliver([try Self.request(41)])
        let call = try #require(await fetches.next())

        worker.deliver([Self.cancel(41)])
        #expect(await call.cancellation(), "the handler's task was cancelled")
        // The handler holds its task until answered: nothing may say it ended yet.
        try await Self.barrier(worker, outbox, 900)
        try outbox.collect()
        let early = outbox.messages.filter { $0.header.correlation == 41 }
        #expect(early.isEmpty, "sent before the task ended: \(early.map(\.header.kind.name))")

        // The handler returns (with a response, even): the answer says the task ended, in place
        // of the result.
        await call.succeed([DataItem(id: "1", title: "late")])
        let answered = try await outbox.waitFor("io-cancelled") { $0.header.kind == .ioCancelled && $0.header.correlation == 41 }
        let answer = try WireJSON.decode(IOCancelAnswer.self, from: answered.payload)
        #expect(answer.task == .ended)
        #expect(answer.endedAtNs != nil)
        #expect(answered.address == "loader/a")
        try await Self.barrier(worker, outbox, 901)
        try outbox.collect()
        let results = outbox.messages.filter { $0.header.kind == .ioResult }
        #expect(results.isEmpty, "a cancelled call's result is never sent")
        #expect(worker.onLoop { $0.serving.isEmpty })
        #expect(worker.onLoop { $0.core.serving.isEmpty })
    }

    @Test func aCancelAfterTheResultSaysFinishedAndOneForNoCallSaysUnknown() async throws {
        let (worker, outbox, fetches) = try await Self.servingWorker()
        defer { worker.stop() }
        worker.deliver([try Self.request(42)])
        let call = try #require(await fetches.next())
        await call.succeed([DataItem(id: "1", title: "one")])
        _ = try await outbox.waitFor("the result") { $0.header.kind == .ioResult && $0.header.correlation == 42 }

        worker.deliver([Self.cancel(42), Self.cancel(43)])
        let finished = try await outbox.waitFor("io-cancelled 42") { $0.header.kind == .ioCancelled && $0.header.correlation == 42 }
        let unknown = try await outbox.waitFor("io-cancelled 43") { $0.header.kind == .ioCancelled && $0.header.correlation == 43 }
        #expect(try WireJSON.decode(IOCancelAnswer.self, from: finished.payload) == IOCancelAnswer(task: .finished))
        #expect(try WireJSON.decode(IOCancelAnswer.self, from: unknown.payload) == IOCancelAnswer(task: .unknown))
    }
}
