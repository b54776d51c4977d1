import Foundation
import Grove
import GroveRuntime
import GroveWire
import Synchronization

/// io calls this worker's machines sent to other workers, waiting for their results. A call
/// cancelled by its machine (cancel, replace, terminal state, stop) is answered at once with a
/// cancellation and an `io-cancel` goes to the worker running it; its late result finds no
/// waiter and is dropped.
final class RemoteCalls: Sendable {
    private struct Table {
        var next: UInt64 = 1
        var waiting: [UInt64: CheckedContinuation<IOCallResult, Never>] = [:]
        var cancelledEarly: Set<UInt64> = []
    }

    private let table = Mutex(Table())
    let link: WorkerLink

    init(link: WorkerLink) { self.link = link }

    func call(address: String, request: IOCallRequest) async -> IOCallResult {
        let id = table.withLock { table in
            defer { table.next += 1 }
            return table.next
        }
        let payload: [UInt8]
        do {
            payload = try WireJSON.encode(request)
        } catch {
            return IOCallResult(failure: .init(code: IOFailure.Code.codec.rawValue, message: "the request could not be encoded: \(error)"))
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let cancelled = table.withLock { table in
                    if table.cancelledEarly.remove(id) != nil { return true }
                    table.waiting[id] = continuation
                    return false
                }
                if cancelled {
                    continuation.resume(returning: Self.cancelled)
                } else {
                    link.send(.ioRequest, correlation: id, address: address, payload: payload)
                }
            }
        } onCancel: {
            let waiter = table.withLock { table in
                guard let waiter = table.waiting.removeValue(forKey: id) else {
                    table.cancelledEarly.insert(id)
                    return nil as CheckedContinuation<IOCallResult, Never>?
                }
                return waiter
            }
            guard let waiter else { return }
            link.send(.ioCancel, correlation: id, address: address, payload: Array(#"{"reason":"cancelled"}"#.utf8))
            waiter.resume(returning: Self.cancelled)
        }
    }

    /// Delivers a result; a result for a call no longer waiting (cancelled, replaced) is dropped.
    func complete(_ id: UInt64, with result: IOCallResult) {
        let waiter = table.withLock { $0.waiting.removeValue(forKey: id) }
        waiter?.resume(returning: result)
    }

    /// Fails every waiting call, e.g. when the coordinator is gone.
    /// - Returns: How many calls were waiting.
    @discardableResult
    func failAll(_ failure: IOCallResult.Failure) -> Int {
        let waiters = table.withLock { table in
            defer { table.waiting = [:] }
            return Array(table.waiting.values)
        }
        for waiter in waiters { waiter.resume(returning: IOCallResult(failure: failure)) }
        return waiters.count
    }

    static let cancelled = IOCallResult(failure: .init(code: "cancelled", message: "the effect was cancelled"))
}

/// The io performer of one hosted machine: runs requests with the worker's own handlers unless
/// the topology places them on another worker, in which case they travel as `io-request`.
struct ClusterIOPerformer: IOPerformer {
    let address: String
    let local: IOHandlers
    let remoteNames: Set<String>
    let calls: RemoteCalls

    func perform<R: IORequest>(_ request: R) async -> Result<R.Response, IOFailure> {
        await perform(request, effect: .generated(0))
    }

    func perform<R: IORequest>(_ request: R, effect: EffectID) async -> Result<R.Response, IOFailure> {
        guard remoteNames.contains(R.name) else { return await local.perform(request) }
        let body: JSONValue
        let id: JSONValue
        do {
            body = try JSONValue(parsing: Data(try WireJSON.encode(request)))
            id = try JSONValue(parsing: Data(try WireJSON.encode(effect)))
        } catch {
            return .failure(IOFailure(.codec, "io request '\(R.name)' could not be encoded: \(error)"))
        }
        let result = await calls.call(address: address, request: IOCallRequest(name: R.name, effect: id, request: body))
        if let failure = result.failure {
            return .failure(IOFailure(IOFailure.Code(rawValue: failure.code), failure.message))
        }
        do {
            let bytes = try WireJSON.encode(result.response ?? .null)
            return .success(try WireJSON.decode(R.Response.self, from: bytes, code: .undecodableEvent, what: "the response to '\(R.name)'"))
        } catch {
            return .failure(IOFailure(.codec, "\(error)"))
        }
    }
}
