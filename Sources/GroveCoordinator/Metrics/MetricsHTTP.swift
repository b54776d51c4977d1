/// The coordinator's answer to an HTTP request on the metrics endpoint: `GET /metrics` gets the
/// Prometheus text, anything else a short error. Pure: the driver feeds it the bytes a
/// connection sent (ZeroMQ's STREAM socket: docs/ARCHITECTURE.md, "Metrics" says why no HTTP
/// library) and sends what it returns, then closes the connection.
package enum MetricsHTTP {
    /// The most a request's head may take; past it the answer is 431.
    static let headLimit = 8192

    /// Why a scrape is refused by the topology's token check (`metrics.requireToken`).
    package enum Refusal: Equatable, Sendable {
        /// No token, or not a valid one: 401.
        case unauthenticated(String)
        /// A valid token whose key may not read the metrics: 403.
        case forbidden(String)
    }

    /// The check of a request's `Authorization` header (`nil` when it sent none): `nil` to
    /// serve it, else why not.
    package typealias Authorizer = @Sendable (_ authorization: String?) -> Refusal?

    /// The response to `request`, or `nil` while its head is incomplete (no blank line yet).
    /// With `authorize`, the request's `Authorization` header is checked before anything is
    /// rendered.
    static func response(to request: [UInt8], authorize: Authorizer? = nil, body: () -> [UInt8]) -> [UInt8]? {
        // The head, its blank line included, within the limit however the bytes came.
        guard let end = headEnd(request), end + 4 <= headLimit else {
            return request.count > headLimit ? reply("431 Request Header Fields Too Large", "request head over \(headLimit) bytes\n") : nil
        }
        let line = request[..<end].split(separator: UInt8(ascii: "\r"), maxSplits: 1).first ?? []
        let words = line.split(separator: UInt8(ascii: " "))
        guard words.count == 3, words[2].starts(with: "HTTP/1.".utf8) else {
            return reply("400 Bad Request", "expected a request line like GET /metrics HTTP/1.1\n")
        }
        guard words[0].elementsEqual("GET".utf8) || words[0].elementsEqual("HEAD".utf8) else {
            return reply("405 Method Not Allowed", "only GET /metrics is served here\n")
        }
        let path = words[1].split(separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        guard path.elementsEqual("/metrics".utf8) else {
            return reply("404 Not Found", "only GET /metrics is served here\n")
        }
        switch authorize?(header("authorization", in: request[..<end])) {
        case nil: break
        case .unauthenticated(let why):
            return reply("401 Unauthorized", why + "\n", extra: "WWW-Authenticate: Bearer realm=\"grove-metrics\"\r\n")
        case .forbidden(let why):
            return reply("403 Forbidden", why + "\n")
        }
        let text = body()
        return words[0].elementsEqual("HEAD".utf8)
            ? Array(head("200 OK", type: "text/plain; version=0.0.4; charset=utf-8", length: text.count).utf8)
            : reply("200 OK", text, type: "text/plain; version=0.0.4; charset=utf-8")
    }

    /// The answer to a connection that did not send its whole request head in time
    /// (``ScrapeConnections/deadline``).
    static let timedOut = reply("408 Request Timeout", "the request head did not come within \(ScrapeConnections.deadline)\n")

    /// Where the blank line ending the head starts, looking from `start` on (a connection's
    /// bytes are scanned once each as they come, not again from the beginning).
    static func headEnd(_ bytes: [UInt8], from start: Int = 0) -> Int? {
        guard bytes.count >= 4, start <= bytes.count - 4 else { return nil }
        for index in start...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// The value of the first header called `name` (lowercase) in `head`, trimmed; `nil` when
    /// there is none.
    static func header(_ name: String, in head: ArraySlice<UInt8>) -> String? {
        func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
            let blank: Set<UInt8> = [9, 10, 13, 32]
            let start = bytes.firstIndex { !blank.contains($0) } ?? bytes.endIndex
            let end = bytes.lastIndex { !blank.contains($0) }.map { $0 + 1 } ?? start
            return bytes[start..<max(start, end)]
        }
        for line in head.split(separator: UInt8(ascii: "\n")).dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")),
                  String(decoding: trimmed(line[..<colon]), as: UTF8.self).lowercased() == name else { continue }
            return String(decoding: trimmed(line[(colon + 1)...]), as: UTF8.self)
        }
        return nil
    }

    private static func head(_ status: String, type: String, length: Int, extra: String = "") -> String {
        "HTTP/1.1 \(status)\r\n\(extra)Content-Type: \(type)\r\nContent-Length: \(length)\r\nConnection: close\r\n\r\n"
    }

    private static func reply(_ status: String, _ text: String, extra: String = "") -> [UInt8] {
        reply(status, Array(text.utf8), type: "text/plain; charset=utf-8", extra: extra)
    }

    private static func reply(_ status: String, _ body: [UInt8], type: String, extra: String = "") -> [UInt8] {
        Array(head(status, type: type, length: body.count, extra: extra).utf8) + body
    }
}
