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

    /// Sends an `io-request` (its payload: the head, then the request's bytes) and waits for
    /// its result.
    func call(address: String, payload: [UInt8], binary: Bool) async -> IOCallResult {
        let id = table.withLock { table in
            defer { table.next += 1 }
            return table.next
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
                    link.send(.ioRequest, flags: binary ? .binary : [], correlation: id, address: address, payload: payload)
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
        for waiter in waiters { waiter.resume(returning: .failure(failure)) }
        return waiters.count
    }

    static let cancelled = IOCallResult.failure(.init(code: "cancelled", message: "the effect was cancelled"))
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
        // Encoded once, here; decoded once, by the worker that runs it. The coordinator reads
        // only the head.
        var payload: [UInt8] = []
        let binary: Bool
        do {
            try IOCallHead.write(name: R.name, effect: try WireJSON.encode(effect), into: &payload)
            binary = try IOBody.encode(request, into: &payload)
        } catch {
            return .failure(IOFailure(.codec, "io request '\(R.name)' could not be encoded: \(error)"))
        }
        switch await calls.call(address: address, payload: payload, binary: binary) {
        case .failure(let failure):
            return .failure(IOFailure(IOFailure.Code(rawValue: failure.code), failure.message))
        case .response(let bytes, let binary):
            do {
                return .success(try IOBody.decode(R.Response.self, from: bytes, binary: binary, what: "the response to '\(R.name)'"))
            } catch {
                return .failure(IOFailure(.codec, "\(error)"))
            }
        }
    }
}

/// The request and response bytes of an io call: the binary codec between Swift workers, JSON
/// for a value the binary codec refuses; a response comes in its request's codec (JSON to a
/// peer that sent JSON). The header's binary flag says which. Each is encoded once and decoded
/// once.
enum IOBody {
    /// Appends `value`'s bytes to `payload`: in the binary codec when `binary` allows it and
    /// the codec takes the value, else as JSON.
    /// - Returns: Whether they are in the binary codec.
    static func encode(_ value: some Encodable, binary: Bool = true, into payload: inout [UInt8]) throws -> Bool {
        guard binary else {
            payload += try WireJSON.encode(value)
            return false
        }
        let start = payload.count
        do {
            try BinaryCodec.encode(value, into: &payload)
            return true
        } catch {
            payload.removeSubrange(start...)
            payload += try WireJSON.encode(value)
            return false
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from bytes: ArraySlice<UInt8>, binary: Bool, what: String) throws -> T {
        guard binary else { return try WireJSON.decode(T.self, from: Array(bytes), code: .malformedJSON, what: what) }
        do {
            return try BinaryCodec.decode(T.self, from: bytes)
        } catch {
            throw WireError(.malformedFrame, "\(what) could not be decoded as \(T.self) from the binary codec: \(error)")
        }
    }
}
