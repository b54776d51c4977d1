import Foundation
import Grove
import GroveCluster
import GroveRuntime
import Tracing
@_spi(GroveInternal) import GroveWire

extension WorkerRuntime {
    /// Runs an io request for a machine on another worker, as the core decided: the request's
    /// bytes are decoded once and the response encoded once, in the request's codec, both in a
    /// task on the shared pool, not on the I/O thread this actor lives on.
    /// - Parameter parent: The trace context the request carried, when this process traces:
    ///   the handler then runs in a span of its own under it (`WorkerRuntime+Tracing.swift`),
    ///   whose `traceparent` the result carries back.
    func serve(_ payload: ArraySlice<UInt8>, binary: Bool, call id: UInt64, address: String, parent: ServiceContext? = nil) {
        let io = configuration.io
        let worker = link.worker
        if let parent, let tracing {
            serving[id] = Task.detached { [self] in
                let (result, trace) = await Self.run(payload, binary: binary, with: io, on: worker, address: address,
                                                     parent: parent, tracing: tracing)
                await self.finish(id, result.payload, flags: result.binary ? .binary : [], address: address, trace: trace)
            }
            return
        }
        serving[id] = Task.detached { [self] in
            let result = await Self.run(payload, binary: binary, with: io, on: worker)
            await self.finish(id, result.payload, flags: result.binary ? .binary : [], address: address)
        }
    }

    /// A served call's task ended: its result goes, or, when `io-cancel` came first, the
    /// answer that the task has ended (``WorkerCore/taskEnded(_:)``).
    private func finish(_ id: UInt64, _ payload: [UInt8], flags: Header.Flags, address: String, trace: [UInt8]? = nil) {
        serving[id] = nil
        switch core.taskEnded(id) {
        case .result:
            if let trace {
                link.send(.ioResult, flags: flags.union(.traced), correlation: id, address: address,
                          payload: TraceParent.prefixed(trace, payload))
                return
            }
            link.send(.ioResult, flags: flags, correlation: id, address: address, payload: payload)
        case .cancelled(let fate):
            answerCancel(id, fate, address: address)
        case .nothing:
            break
        }
    }

    /// Sends `io-cancelled` for call `id`; a task that ended says when, on `CLOCK_MONOTONIC`.
    func answerCancel(_ id: UInt64, _ fate: IOCancelAnswer.TaskFate, address: String) {
        let answer = IOCancelAnswer(task: fate, endedAtNs: fate == .ended ? Self.monotonicNanoseconds() : nil)
        guard let payload = try? WireJSON.encode(answer) else { return }
        link.send(.ioCancelled, correlation: id, address: address, payload: payload)
    }

    /// `CLOCK_MONOTONIC` now, in nanoseconds: shared by every process of the host.
    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// The `io-result` payload for an `io-request` payload: its head read, its request decoded,
    /// its handler run, its response encoded (a failure, as JSON, when any step fails).
    static func run(_ payload: ArraySlice<UInt8>, binary: Bool, with io: IOHandlers, on worker: String) async
        -> (payload: [UInt8], binary: Bool) {
        func failure(_ code: IOFailure.Code, _ text: String) -> ([UInt8], Bool) {
            (IOCallResult.payload(failing: code.rawValue, text), false)
        }
        let request: any IORequest
        do {
            let head = try IOCallHead(reading: Array(payload))
            guard let type = io.requestType(named: head.name) else {
                return failure(.noHandler, "worker \(worker) has no handler for io request '\(head.name)'; register one in its WorkerConfiguration")
            }
            request = try decode(type, from: payload.dropFirst(head.body.lowerBound), binary: binary)
        } catch {
            return failure(.codec, "\(error)")
        }
        switch await io.perform(erased: request) {
        case .success(let response):
            var bytes: [UInt8] = [IOCallResult.Outcome.response.rawValue]
            do {
                let wroteBinary = try IOBody.encode(response, binary: binary, into: &bytes)
                return (bytes, wroteBinary)
            } catch {
                return failure(.codec, "the response to '\(type(of: request).name)' could not be encoded: \(error)")
            }
        case .failure(let failure):
            return (IOCallResult.payload(failing: failure.code.rawValue, failure.message), false)
        }
    }

    private static func decode<R: IORequest>(_ type: R.Type, from bytes: ArraySlice<UInt8>, binary: Bool) throws -> any IORequest {
        try IOBody.decode(R.self, from: bytes, binary: binary, what: "the io request '\(R.name)'")
    }
}
