/// The coordinator's answer to an HTTP request on the metrics endpoint: `GET /metrics` gets the
/// Prometheus text, anything else a short error. Pure: the driver feeds it the bytes a
/// connection sent (ZeroMQ's STREAM socket: docs/ARCHITECTURE.md, "Metrics" says why no HTTP
/// library) and sends what it returns, then closes the connection.
enum MetricsHTTP {
    /// The most a request's head may take; past it the answer is 431.
    static let headLimit = 8192

    /// The response to `request`, or `nil` while its head is incomplete (no blank line yet).
    static func response(to request: [UInt8], body: () -> [UInt8]) -> [UInt8]? {
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

    private static func head(_ status: String, type: String, length: Int) -> String {
        "HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(length)\r\nConnection: close\r\n\r\n"
    }

    private static func reply(_ status: String, _ text: String) -> [UInt8] {
        reply(status, Array(text.utf8), type: "text/plain; charset=utf-8")
    }

    private static func reply(_ status: String, _ body: [UInt8], type: String) -> [UInt8] {
        Array(head(status, type: type, length: body.count).utf8) + body
    }
}
