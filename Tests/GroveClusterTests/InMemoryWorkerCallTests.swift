@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveExamples
@_spi(GroveInternal) import GroveWire
import Testing

/// A real worker runtime whose machines (``DataLoader``s) call another worker for their
/// `FetchItems`, with the coordinator played by the test and no socket: the calls leave as the
/// core says, their results, cancellations and the coordinator's loss reach the waiting tasks
/// through the hop onto the worker's loop.
@Suite(.timeLimit(.minutes(2)))
struct InMemoryWorkerCallTests {
    static let welcome = Welcome(machines: [.init(name: "loader", type: "DataLoader", keyed: true)], remoteIO: ["FetchItems"],
                                 heartbeatIntervalMs: 250, heartbeatTimeoutMs: 60_000, mailboxCapacity: 100)

    /// A welcomed worker hosting `loader` (keyed), whose `FetchItems` runs elsewhere. Nothing
    /// ticks it: the coordinator's silence never fails its calls here.
    static func welcomedWorker() async throws -> (InMemoryWorker, Outbox) {
        var configuration = WorkerConfiguration()
        configuration.register(DataLoader.self)
        let worker = try InMemoryWorker(name: "edge", configuration: configuration)
        let outbox = Outbox(worker: worker)
        worker.start()
        worker.deliver([WireMessage(Header(.welcome), payload: try WireJSON.encode(welcome)).frames])
        _ = try outbox.take("the registration") { $0.header.kind == .register }
        return (worker, outbox)
    }

    /// What a worker sent, batches opened, as it comes.
    final class Outbox {
        let worker: InMemoryWorker
        var messages: [WireMessage] = []
        var correlation: UInt64 = 1000

        init(worker: InMemoryWorker) { self.worker = worker }

        /// Runs the worker until idle and takes what it sent.
        func collect() throws {
            worker.runUntilIdle()
            for frames in worker.takeSent() {
                let message = try WireMessage(frames: frames)
                guard message.header.kind == .batch else { messages.append(message); continue }
                messages += try Batch.envelopes(in: message.payload).map { try $0.message(in: message.payload) }
            }
        }

        /// The first message sent so far, or within 10 s, that `matches`; taken off the list.
        func waitFor(_ what: String, _ matches: (WireMessage) -> Bool) async throws -> WireMessage {
            let giveUp = ContinuousClock.now + .seconds(10)
            while true {
                try collect()
                if let index = messages.firstIndex(where: matches) { return messages.remove(at: index) }
                guard ContinuousClock.now < giveUp else {
                    throw WireError(.timeout, "\(what) was not sent within 10 s; sent: \(messages.map { "\($0.header.kind.name) \($0.header.correlation)" })")
                }
                try await Task.sleep(for: .milliseconds(2))
            }
        }

        /// What the worker did not send in its turn.
        struct Missing: Error, CustomStringConvertible {
            let description: String
        }

        /// The first message sent so far that `matches`, taken off the list: the worker runs until
        /// idle first, so what it sends in its own turns is there; nothing is waited for.
        func take(_ what: String, _ matches: (WireMessage) -> Bool) throws -> WireMessage {
            try collect()
            guard let index = messages.firstIndex(where: matches) else {
                throw Missing(description: "\(what) was not sent in the worker's turn; sent: \(messages.map { "\($0.header.kind.name) \($0.header.correlation)" })")
            }
            return messages.remove(at: index)
        }

        /// The machine's state (JSON), asked with `get`, checked to contain `text`.
        func state(of address: String, containing text: String) throws -> String {
            correlation += 1
            let asked = correlation
            worker.deliver([WireMessage(Header(.get, correlation: asked), address: address).frames])
            let state = try take("the state of \(address)") { $0.header.correlation == asked }.text
            guard state.contains(text) else {
                throw Missing(description: "the state of \(address) does not contain \(text): \(state)")
            }
            return state
        }

        func send(_ event: String, to address: String) {
            correlation += 1
            worker.deliver([WireMessage.event(address, event, correlation: correlation).frames])
        }

        /// The `io-request` `address`'s machine sent, its head checked.
        func request(from address: String, except earlier: Set<UInt64> = []) throws -> WireMessage {
            let request = try take("an io request from \(address)") {
                $0.header.kind == .ioRequest && $0.address == address && !earlier.contains($0.header.correlation)
            }
            #expect(try IOCallHead(reading: request.payload).name == "FetchItems")
            return request
        }

        /// Answers `request` with `items`, in its codec.
        func answer(_ request: WireMessage, with items: [DataItem]) throws {
            var payload: [UInt8] = [IOCallResult.Outcome.response.rawValue]
            let binary = try IOBody.encode(items, binary: request.header.flags.contains(.binary), into: &payload)
            let header = Header(.ioResult, flags: binary ? .binary : [], correlation: request.header.correlation)
            worker.deliver([WireMessage(header, address: request.address, payload: payload).frames])
        }
    }

    @Test func aCallLeavesAndItsResultReachesTheMachine() async throws {
        let (worker, outbox) = try await Self.welcomedWorker()
        defer { worker.stop() }
        outbox.send(#""load""#, to: "loader/a")
        let request = try outbox.request(from: "loader/a")
        #expect(worker.onLoop { $0.waiters.keys.sorted() } == [request.header.correlation])

        try outbox.answer(request, with: [DataItem(id: "1", title: "one")])
        let state = try outbox.state(of: "loader/a", containing: "loaded")
        #expect(state.contains(#""title":"one""#), "\(state)")
        #expect(worker.onLoop { $0.waiters.isEmpty })
        #expect(worker.onLoop { $0.core.calls.isEmpty })
    }

    @Test func aReplacedCallIsAnsweredAtOnceAndCancelledWhereItRuns() async throws {
        let (worker, outbox) = try await Self.welcomedWorker()
        defer { worker.stop() }
        outbox.send(#""load""#, to: "loader/b")
        let first = try outbox.request(from: "loader/b")

        // A reload replaces the fetch: the first call's task is cancelled, its call cancelled
        // where it runs, and a second call leaves.
        outbox.send(#""reload""#, to: "loader/b")
        let cancel = try outbox.take("io-cancel") { $0.header.kind == .ioCancel }
        #expect(cancel.header.correlation == first.header.correlation)
        #expect(cancel.address == "loader/b")
        let second = try outbox.request(from: "loader/b", except: [first.header.correlation])
        #expect(worker.onLoop { $0.waiters.keys.sorted() } == [second.header.correlation], "the first task was answered at once")

        // The first call's late result is dropped; the second's arrives.
        try outbox.answer(first, with: [DataItem(id: "1", title: "stale")])
        try outbox.answer(second, with: [DataItem(id: "2", title: "fresh")])
        let state = try outbox.state(of: "loader/b", containing: "loaded")
        #expect(state.contains("fresh") && !state.contains("stale"), "\(state)")
        #expect(worker.onLoop { $0.waiters.isEmpty })
    }

    @Test func aCoordinatorThatForgotTheWorkerFailsItsWaitingCall() async throws {
        let (worker, outbox) = try await Self.welcomedWorker()
        defer { worker.stop() }
        outbox.send(#""load""#, to: "loader/c")
        let request = try outbox.request(from: "loader/c")

        worker.deliver([WireMessage(Header(.error), payload: WireError(.unavailable, "forgotten").payload).frames])
        _ = try outbox.take("a new registration") { $0.header.kind == .register }
        worker.deliver([WireMessage(Header(.welcome), payload: try WireJSON.encode(Self.welcome)).frames])
        let state = try outbox.state(of: "loader/c", containing: "error")
        #expect(state.contains("no longer knows this worker"), "\(state)")
        #expect(worker.onLoop { $0.waiters.isEmpty })

        // Its result, should it come after all, is dropped: the machine stays in its error.
        try outbox.answer(request, with: [DataItem(id: "1", title: "late")])
        let after = try outbox.state(of: "loader/c", containing: "error")
        #expect(!after.contains("late"))
    }

    @Test func whatMachinesSendWhileTheCoordinatorHasGivenUpIsDroppedAndTheirCallsFail() async throws {
        let (worker, outbox) = try await Self.welcomedWorker()
        defer { worker.stop() }
        outbox.send(#""load""#, to: "loader/d")
        let first = try outbox.request(from: "loader/d")
        try outbox.answer(first, with: [DataItem(id: "1", title: "one")])
        _ = try outbox.state(of: "loader/d", containing: "loaded")

        worker.deliver([WireMessage(Header(.error), payload: WireError(.unavailable, "forgotten").payload).frames])
        _ = try outbox.take("a new registration") { $0.header.kind == .register }
        // The machine still runs: a reload's reply and its call to another worker are not sent,
        // and the call fails at once instead of waiting for a result nothing would bring.
        outbox.send(#""reload""#, to: "loader/d")
        let unanswered = outbox.correlation
        let peeked = worker.peekState(of: "loader/d") ?? ""
        #expect(peeked.contains("not registered with the coordinator"), "\(peeked)")
        #expect(worker.onLoop { $0.waiters.isEmpty })

        worker.deliver([WireMessage(Header(.welcome), payload: try WireJSON.encode(Self.welcome)).frames])
        _ = try outbox.state(of: "loader/d", containing: "error")
        try outbox.collect()
        let leaked = outbox.messages.filter { $0.header.correlation == unanswered || $0.header.kind == .ioRequest }
        #expect(leaked.isEmpty, "sent while the coordinator had given up: \(leaked.map { "\($0.header.kind.name) \($0.header.correlation)" })")
    }
}
