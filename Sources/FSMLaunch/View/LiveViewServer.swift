import Foundation
import GroveClient
import GroveCluster
import GroveView
import GroveWire
import Hummingbird
import Logging

/// The live view's HTTP side (Hummingbird): the page and its files, the `/events` stream
/// (server-sent events), and the viewers' actions. It only moves bytes: who may do what is
/// ``ViewAccess``'s, what to show is ``ViewCore``'s (in ``LiveViewHub``).
enum LiveViewServer {
    static let cookie = "grove_view"
    /// The most connections the view holds at once: viewers' streams, pages, actions.
    static let connectionLimit = 64
    /// How long a connection may take to send its request head, or idle between requests.
    static let idleTimeout: Duration = .seconds(10)
    /// The most an action's body may hold: an event for a machine is at most
    /// `limits.payloadBytes`, with its address and some JSON around it.
    static func bodyLimit(_ topology: Topology) -> Int { topology.limits.payloadBytes + topology.limits.addressBytes + 1024 }

    /// - Parameters:
    ///   - clients: The coordinator's clients endpoint, for the actions.
    ///   - credentials: The view's own keys on a CURVE coordinator.
    ///   - port: The port the view listens on once bound, for the `Host` check.
    static func router(hub: LiveViewHub, clients: String, credentials: Credentials?, port: @escaping @Sendable () -> Int) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/") { request, _ -> Response in
            guard ViewAccess.isLocalHost(request.head.authority, port: port()) else { return refusedHost() }
            // The token from the printed URL goes into a cookie, and out of the address bar.
            if let token = request.uri.queryParameters.get("token") {
                // Only a token's characters go into the cookie (no `;` to add attributes with).
                guard token.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) || $0 == UInt8(ascii: ".") }) else {
                    return text("a token is hexadecimal digits and dots: copy the URL fsm-launch or fsm-send view printed\n", status: .badRequest)
                }
                var headers = HTTPFields()
                headers[.location] = "/"
                headers[.setCookie] = "\(cookie)=\(token); Path=/; HttpOnly; SameSite=Strict"
                return Response(status: .seeOther, headers: headers)
            }
            switch hub.decide(.watch, token: request.cookies[cookie]?.value) {
            case .allowed: return text(ViewAssets.page, type: "text/html; charset=utf-8")
            case .unauthenticated(let why): return text(why + "\n", status: .unauthorized)
            case .forbidden(let why): return text(why + "\n", status: .forbidden)
            }
        }
        router.get("/view.js") { _, _ in text(ViewAssets.script, type: "text/javascript; charset=utf-8") }
        router.get("/view.css") { _, _ in text(ViewAssets.style, type: "text/css; charset=utf-8") }
        router.get("/events") { request, _ -> Response in
            guard ViewAccess.isLocalHost(request.head.authority, port: port()) else { return refusedHost() }
            let viewer: ViewAccess.Viewer
            switch hub.decide(.watch, token: request.cookies[cookie]?.value) {
            case .allowed(let allowed): viewer = allowed
            case .unauthenticated(let why): return text(why + "\n", status: .unauthorized)
            case .forbidden(let why): return text(why + "\n", status: .forbidden)
            }
            let (id, stream) = hub.connect(viewer)
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
                for await update in stream {
                    try await writer.write(ByteBuffer(string: "data: \(update)\n\n"))
                    hub.written(id, bytes: update.utf8.count)
                }
                try await writer.finish(nil)
            })
        }
        router.post("/api/send") { request, _ -> Response in
            try await act(request, hub: hub, port: port(), clients: clients, credentials: credentials) { body in
                guard let address = body["address"]?.stringValue, let event = body["event"] else {
                    throw ActionError(status: .badRequest, "expected {\"address\": \"auth\", \"event\": \"startLogin\"}")
                }
                return (.send(address: address), { client in
                    String(decoding: try client.send(Array(event.jsonData), to: address), as: UTF8.self)
                })
            }
        }
        router.post("/api/cancel") { request, _ -> Response in
            try await act(request, hub: hub, port: port(), clients: clients, credentials: credentials) { body in
                guard let address = body["address"]?.stringValue, let effect = body["effect"] else {
                    throw ActionError(status: .badRequest, "expected {\"address\": \"poller/eu\", \"effect\": \"poll-fetch\"}")
                }
                return (.cancel(address: address), { client in
                    try client.cancel(effect: Array(effect.jsonData), of: address)
                    return "cancelled \(effect) of \(address)"
                })
            }
        }
        return router
    }

    struct ActionError: Error {
        var status: HTTPResponse.Status
        var message: String
        init(status: HTTPResponse.Status, _ message: String) {
            self.status = status
            self.message = message
        }
    }

    /// One viewer action: its origin and token checked, its body read, the decision taken, then
    /// the request made to the coordinator as a client (a blocking call, off the server's threads).
    private static func act(_ request: Request, hub: LiveViewHub, port: Int, clients endpoint: String, credentials keys: Credentials?,
                            _ parse: ([String: JSONValue]) throws -> (ViewAccess.Action, @Sendable (Client) throws -> String)) async throws -> Response {
        guard ViewAccess.isLocalHost(request.head.authority, port: port) else { return refusedHost() }
        // A custom header: a page of another origin cannot send it without CORS, which this view
        // never allows (with SameSite=Strict, a second lock against cross-site requests).
        guard request.headers.contains(where: { $0.name.canonicalName == "x-grove-view" && $0.value == "1" }) else {
            return text("an action needs the header X-Grove-View: 1 (the view's page sends it)\n", status: .forbidden)
        }
        // Who asks, before its body is read: a stranger's body is not worth the memory.
        if case .unauthenticated(let why) = hub.decide(.watch, token: request.cookies[cookie]?.value) {
            return text(why + "\n", status: .unauthorized)
        }
        var request = request
        let action: ViewAccess.Action
        let perform: @Sendable (Client) throws -> String
        do {
            let bytes = try await request.collectBody(upTo: bodyLimit(hub.topology))
            guard let body = (try? JSONValue(parsing: Data(buffer: bytes)))?.objectValue else {
                throw ActionError(status: .badRequest, "the body must be one JSON object")
            }
            (action, perform) = try parse(body)
        } catch let error as ActionError {
            return text(error.message + "\n", status: error.status)
        }
        switch hub.decide(action, token: request.cookies[cookie]?.value) {
        case .unauthenticated(let why): return text(why + "\n", status: .unauthorized)
        case .forbidden(let why): return text(why + "\n", status: .forbidden)
        case .allowed: break
        }
        let outcome: Result<String, WireError> = await Task.detached {
            do throws(WireError) {
                let client = try Client(endpoint: endpoint, timeout: .seconds(5), retryUnavailable: true, credentials: keys)
                do { return .success(try perform(client)) } catch let error as WireError { return .failure(error) } catch {
                    return .failure(WireError(.unreachable, "\(error)"))
                }
            } catch {
                return .failure(error)
            }
        }.value
        switch outcome {
        case .success(let reply): return text(reply + "\n", type: "application/json")
        case .failure(let error): return text("\(error.code.rawValue): \(error.message)\n", status: .unprocessableContent)
        }
    }

    static func refusedHost() -> Response {
        text("this view answers requests addressed to 127.0.0.1 or localhost at its port only\n", status: .misdirectedRequest)
    }

    static func text(_ body: String, type: String = "text/plain; charset=utf-8", status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "no-store"
        // Nothing from anywhere else: the page's own script and style only.
        headers[.contentSecurityPolicy] = "default-src 'self'; img-src 'self' data:"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}
