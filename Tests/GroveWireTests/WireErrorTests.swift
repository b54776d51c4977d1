import Foundation
import GroveWire
import Testing

@Suite("WireError", .timeLimit(.minutes(2)))
struct WireErrorTests {
    @Test func encodesCodeMessageAddressAndPathButNotTheCorrelation() throws {
        let error = WireError(.undecodableEvent, "send an event of UserForm", address: "form",
                              path: "$.updateEmail._0", correlation: 99)
        let json = String(decoding: try WireJSON.encode(error), as: UTF8.self)
        #expect(json == #"{"address":"form","code":"undecodable-event","message":"send an event of UserForm","path":"$.updateEmail._0"}"#)
        #expect(!json.contains("correlation"))
        #expect(!json.contains("99"))
        #expect(error.payload == Array(json.utf8))
    }

    @Test func leavesOutAbsentAddressAndPath() throws {
        let json = String(decoding: WireError(.busy, "retry later").payload, as: UTF8.self)
        #expect(json == #"{"code":"busy","message":"retry later"}"#)
    }

    @Test func decodesAnErrorReplyPayload() throws {
        let decoded = try WireJSON.decode(WireError.self,
            from: Array(#"{"code":"unavailable","message":"m","address":"poller/eu-1","path":"$.x"}"#.utf8))
        #expect(decoded.code == .unavailable)
        #expect(decoded.message == "m")
        #expect(decoded.address == "poller/eu-1")
        #expect(decoded.path == "$.x")
        #expect(decoded.correlation == nil)

        // Codes this build does not know still decode: peers may be newer.
        let future = try WireJSON.decode(WireError.self, from: Array(#"{"code":"quota-exceeded","message":"m"}"#.utf8))
        #expect(future.code.rawValue == "quota-exceeded")
        #expect(future.address == nil)
    }

    @Test func payloadRoundTrips() throws {
        let error = WireError(.workerLost, "worker edge was lost", address: "auth", correlation: 4)
        let decoded = try WireJSON.decode(WireError.self, from: error.payload)
        #expect(decoded.code == error.code)
        #expect(decoded.message == error.message)
        #expect(decoded.address == error.address)
        #expect(decoded.path == nil)
    }

    @Test func equalityAndHashingUseTheCodeOnly() {
        let a = WireError(.busy, "one", address: "auth", path: "$.a", correlation: 1)
        let b = WireError(.busy, "two", address: nil, path: nil, correlation: 2)
        let c = WireError(.timeout, "one", address: "auth", path: "$.a", correlation: 1)
        #expect(a == b)
        #expect(a != c)
        #expect(Set([a, b, c]).count == 2)
        #expect(a.hashValue == b.hashValue)
    }

    @Test func codesHaveTheDocumentedSpelling() {
        let codes: [(WireError.Code, String)] = [
            (.malformedFrame, "malformed-frame"), (.unsupportedVersion, "unsupported-version"),
            (.unknownKind, "unknown-kind"), (.oversized, "oversized"), (.malformedJSON, "malformed-json"),
            (.unknownMachine, "unknown-machine"), (.undecodableEvent, "undecodable-event"), (.unencodableState, "unencodable-state"),
            (.unavailable, "unavailable"), (.workerLost, "worker-lost"), (.busy, "busy"),
            (.mailboxFull, "mailbox-full"), (.machineEnded, "machine-ended"),
            (.registrationRejected, "registration-rejected"), (.timeout, "timeout"), (.unreachable, "unreachable"),
            (.invalidEndpoint, "invalid-endpoint"), (.moved, "moved"),
        ]
        for (code, spelling) in codes {
            #expect(code.rawValue == spelling)
        }
        #expect(Set(codes.map(\.0)).count == codes.count)
    }

    @Test func aMovedErrorCarriesItsReason() throws {
        let moved = WireError(.moved, "counter/7 is not placed on worker data-1 now", address: "counter/7", reason: .notHere)
        let json = String(decoding: moved.payload, as: UTF8.self)
        #expect(json == #"{"address":"counter/7","code":"moved","message":"counter/7 is not placed on worker data-1 now","reason":"not-here"}"#)
        #expect(try WireJSON.decode(WireError.self, from: moved.payload).reason == .notHere)
        #expect(moved.description == "moved (not-here) at counter/7: counter/7 is not placed on worker data-1 now")
        // Without a reason, as every other code: nothing more on the wire.
        #expect(!String(decoding: WireError(.busy, "retry").payload, as: UTF8.self).contains("reason"))
        let reasons: [(WireError.Reason, String)] = [
            (.notHere, "not-here"), (.notSpawned, "not-spawned"), (.notRegistered, "not-registered"),
            (.notCommitted, "not-committed"), (.stopping, "stopping"),
        ]
        for (reason, spelling) in reasons { #expect(reason.rawValue == spelling) }
        // Reasons this build does not know still decode: workers may be newer.
        #expect(try WireJSON.decode(WireError.self, from: Array(#"{"code":"moved","reason":"resharded","message":"m"}"#.utf8)).reason?.rawValue
            == "resharded")
    }

    @Test func descriptionShowsCodeAddressPathAndMessage() {
        #expect(WireError(.busy, "retry").description == "busy: retry")
        #expect(WireError(.undecodableEvent, "bad", address: "form", path: "$.a").description
            == "undecodable-event at form ($.a): bad")
    }
}
