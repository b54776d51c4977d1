@testable import GroveCluster
@testable import GroveCoordinator
@_spi(GroveInternal) import GroveWire
import Logging
import Testing

/// The coordinator's part of a trace (docs/ARCHITECTURE.md, "Traces"): a client's event that
/// carries a traceparent is routed under a span of its own, the client's span's child, and
/// reaches the worker with the route span's traceparent. Untraced events, and every event when
/// the process has no tracer, go as they came.
@Suite(.timeLimit(.minutes(2)))
struct CoordinatorTracingTests {
    static let client = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    static func traced(_ traceparent: String, correlation: UInt64 = 7) -> WireMessage {
        var event = WireMessage.event("auth", #""startLogin""#, correlation: correlation)
        event.trace = Array(traceparent.utf8)
        return event
    }

    @Test func aTracedEventIsRoutedUnderASpanOfItsOwn() throws {
        let tracer = W3CTestTracer()
        let cluster = InMemoryCluster(tracer: tracer)
        cluster.registerAll()
        cluster.fromClient("c", Self.traced(Self.client))
        let forwarded = try #require(cluster.requests(to: "edge").first)
        #expect(forwarded.payload == Array(#""startLogin""#.utf8), "the payload proper, as the client sent it")
        let route = try #require(tracer.ended.withLock { $0 }.first)
        #expect(route.name == "route event")
        #expect(route.traceID == "4bf92f3577b34da6a3ce929d0e0e4736", "the client's trace")
        #expect(route.parentID == "00f067aa0ba902b7", "the client's span is its parent")
        #expect(route.attributes["grove.worker"] != nil)
        let expected = "00-4bf92f3577b34da6a3ce929d0e0e4736-\(route.spanID)-01"
        #expect(forwarded.trace.map { String(decoding: $0, as: UTF8.self) } == expected, "the worker's parent is the route")
    }

    @Test func withoutATracerTheTraceContextPassesThroughUntouched() throws {
        let cluster = InMemoryCluster()
        cluster.registerAll()
        cluster.fromClient("c", Self.traced(Self.client))
        let forwarded = try #require(cluster.requests(to: "edge").first)
        #expect(forwarded.trace == Array(Self.client.utf8))
        #expect(forwarded.payload == Array(#""startLogin""#.utf8))
    }

    @Test func anUntracedEventMakesNoSpan() throws {
        let tracer = W3CTestTracer()
        let cluster = InMemoryCluster(tracer: tracer)
        cluster.registerAll()
        cluster.fromClient("c", WireMessage.event("auth", #""startLogin""#, correlation: 3))
        #expect(try #require(cluster.requests(to: "edge").first).trace == nil)
        #expect(tracer.ended.withLock { $0 }.isEmpty)
    }

    /// A traceparent that is not one is ignored: the event is routed (untraced), and the
    /// coordinator says so once, not once per event.
    @Test func aMalformedTraceparentIsIgnoredAndLoggedOnce() throws {
        let tracer = W3CTestTracer()
        let cluster = InMemoryCluster(tracer: tracer)
        cluster.registerAll()
        cluster.fromClient("c", Self.traced("00-not-a-trace", correlation: 1))
        cluster.fromClient("c", Self.traced("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", correlation: 2))
        let forwarded = cluster.requests(to: "edge")
        #expect(forwarded.count == 2, "both events were routed")
        #expect(forwarded.allSatisfy { $0.trace == nil })
        #expect(cluster.toClient("c").isEmpty, "no refusal")
        #expect(tracer.ended.withLock { $0 }.isEmpty)
        let logged = cluster.warnings.filter { $0.contains("malformed traceparent") }
        #expect(logged.count == 1, "\(cluster.warnings)")
        #expect(logged.first?.contains("55") == true, "it says what is wrong: \(logged)")
    }

    /// A prefix whose length byte runs past the payload leaves no payload to read: that is a
    /// malformed frame, refused as one.
    @Test func aTracePrefixRunningPastThePayloadIsRefused() throws {
        let cluster = InMemoryCluster()
        cluster.registerAll()
        var frames = Self.traced(Self.client, correlation: 9).frames
        frames[2] = [200, 0x30]
        cluster.fromClient("c", frames: frames)
        let reply = try #require(cluster.toClient("c").first)
        #expect(reply.header.kind == .error && reply.header.correlation == 9)
        #expect(String(decoding: reply.payload, as: UTF8.self).contains("malformed-frame"))
        #expect(cluster.requests(to: "edge").isEmpty)
    }
}
