public import Grove

/// The effect handlers of one process: what runs `.io` requests locally.
///
/// ```swift
/// var handlers = IOHandlers()
/// handlers.register(FetchItems.self) { request in try await api.items(page: request.page) }
/// let host = MachineHost(DataLoader.self, io: handlers)
/// ```
public struct IOHandlers: Sendable, IOPerformer {
    private var handlers: [String: @Sendable (any IORequest) async throws -> any Sendable] = [:]
    private var requestTypes: [String: any IORequest.Type] = [:]

    /// An empty set: every request fails with `IOFailure.Code.noHandler` until registered.
    public init() {}

    /// Registers the handler for requests of type `R` (by `R.name`), replacing any earlier one.
    /// - Parameters:
    ///   - type: The request type.
    ///   - handler: Runs the request. A thrown error reaches the machine as an ``IOFailure`` with
    ///     code `handlerFailed`.
    public mutating func register<R: IORequest>(
        _ type: R.Type,
        _ handler: @escaping @Sendable (R) async throws -> R.Response
    ) {
        requestTypes[R.name] = R.self
        handlers[R.name] = { request in
            guard let typed = request as? R else {
                throw IOFailure(.codec, "handler for '\(R.name)' received a \(Swift.type(of: request))")
            }
            return try await handler(typed)
        }
    }

    /// The names of the requests this set can run.
    public var names: Set<String> { Set(handlers.keys) }

    /// The request type registered under `name`, so a transport can decode requests by name.
    package func requestType(named name: String) -> (any IORequest.Type)? { requestTypes[name] }

    /// Runs a request whose type is only known at run time (decoded from the wire).
    package func perform(erased request: any IORequest) async -> Result<any Encodable & Sendable, IOFailure> {
        await performOpened(request)
    }

    private func performOpened<R: IORequest>(_ request: R) async -> Result<any Encodable & Sendable, IOFailure> {
        await perform(request).map { $0 }
    }

    @usableFromInline
    package func perform<R: IORequest>(_ request: R) async -> Result<R.Response, IOFailure> {
        guard let handler = handlers[R.name] else {
            return .failure(IOFailure(.noHandler,
                "no handler is registered for io request '\(R.name)'; register one with "
                + "IOHandlers.register(\(R.self).self) { request in ... }"))
        }
        do {
            let response = try await handler(request)
            guard let typed = response as? R.Response else {
                return .failure(IOFailure(.codec, "handler for '\(R.name)' returned \(type(of: response))"))
            }
            return .success(typed)
        } catch let failure as IOFailure {
            return .failure(failure)
        } catch {
            return .failure(IOFailure(.handlerFailed, "handler for '\(R.name)' threw \(error)"))
        }
    }
}
