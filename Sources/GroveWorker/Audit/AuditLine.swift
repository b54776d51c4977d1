import Crypto
import Foundation
import Grove
import GroveCluster
import GroveWire

/// One committed transition as a line of a worker's audit log: a JSON object on one line, its
/// keys always in this order, ended by a newline:
///
/// ```json
/// {"time":"2026-11-26T06:01:02.123Z","worker":"main-0","address":"auth","origin":"sent","event":{"login":{}},"before":"sha256:…","after":"sha256:…"}
/// ```
///
/// `state` follows `after` when the topology's `audit.states` is true. `event` and `state` are
/// redacted when their types adopt `Redacting`; the digests are of the full state.
struct AuditLine: Equatable {
    /// When the transition committed: UTC, ISO 8601 with milliseconds.
    var time: String
    var worker: String
    var address: String
    /// `sent`, `inline`, `effect <id>` or `timer <id>` (``EventOrigin``'s description).
    var origin: String
    /// The event as JSON (GroveWire's compact form, sorted keys), redacted when it has secrets.
    var event: [UInt8]
    /// ``AuditDigest`` of the state before the transition.
    var before: String
    /// ``AuditDigest`` of the state the transition committed.
    var after: String
    /// The committed state as JSON, redacted when it has secrets; nil unless asked for.
    var state: [UInt8]?

    /// Appends the line, newline included, to `bytes`.
    func write(to bytes: inout [UInt8]) {
        func key(_ name: String, _ first: Bool = false) {
            bytes.append(contentsOf: Array(((first ? "{" : ",") + "\"" + name + "\":").utf8))
        }
        func text(_ name: String, _ value: String, first: Bool = false) {
            key(name, first)
            bytes.append(contentsOf: (try? WireJSON.encode(value)) ?? Array(#""""#.utf8))
        }
        text("time", time, first: true)
        text("worker", worker)
        text("address", address)
        text("origin", origin)
        key("event")
        bytes.append(contentsOf: event)
        text("before", before)
        text("after", after)
        if let state {
            key("state")
            bytes.append(contentsOf: state)
        }
        bytes.append(contentsOf: Array("}\n".utf8))
    }

    /// The line's bytes, newline included.
    var bytes: [UInt8] {
        var bytes: [UInt8] = []
        write(to: &bytes)
        return bytes
    }
}

/// The digest of a state in the audit log: `sha256:` and 64 lowercase hex digits, of the state's
/// JSON as GroveWire writes it (compact, keys sorted, so equal states give equal digests in any
/// process; a `Set` is written in its iteration order, which is not). Of the full state, secrets
/// included: two states that differ only in a secret differ in their digests.
enum AuditDigest {
    static let prefix = "sha256:"

    /// The digest of `json`, a state's JSON.
    static func of(_ json: [UInt8]) -> String {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(64)
        for byte in SHA256.hash(data: json) {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0f)])
        }
        return prefix + String(decoding: text, as: UTF8.self)
    }

    /// The digest of `state`'s JSON; `unencodable` with why when it does not encode.
    static func of<State: Encodable>(state: State) -> String {
        do {
            return of(try WireJSON.encode(state))
        } catch {
            return "unencodable"
        }
    }
}

/// The time of an audit line.
enum AuditTime {
    /// `date` in UTC as ISO 8601 with milliseconds, e.g. `2026-11-26T06:01:02.123Z`.
    static func format(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// A host clock's time, as ``format(_:)-(Date)`` writes it: the whole seconds through
    /// `Date`, the milliseconds as integers (a `Double` of them can round one down).
    static func format(_ time: Timestamp) -> String {
        // Before 1970 is not a time a worker runs at.
        let milliseconds = max(0, time.sinceEpoch.wholeMilliseconds)
        let (seconds, rest) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let whole = Date(timeIntervalSince1970: Double(seconds)).formatted(Date.ISO8601FormatStyle())
        let digits = String(rest)
        return whole.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }
}
