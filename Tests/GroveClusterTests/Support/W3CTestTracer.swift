import Synchronization
import Tracing

/// A tracer for unit tests that speaks W3C `traceparent` as swift-otel's does (so what the
/// processes put on the wire can be checked without an exporter) and keeps every span it ended.
final class W3CTestTracer: Tracer, Sendable {
    /// The current span's traceparent, as the tracer keeps it in a context.
    enum Key: ServiceContextKey {
        typealias Value = String
    }

    /// A span as it ended.
    struct Ended: Sendable, Equatable {
        var name: String
        var traceID: String
        var spanID: String
        /// Empty for a root span.
        var parentID: String
        var attributes: [String: String]
    }

    let ended = Mutex<[Ended]>([])

    func startSpan<Instant: TracerInstant>(_ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
                                           at instant: @autoclosure () -> Instant, function: String, file fileID: String,
                                           line: UInt) -> TestSpan {
        var own = context()
        let parent = own[Key.self].map { Array($0.utf8) }
        let traceID = parent.map { String(decoding: $0[3 ..< 35], as: UTF8.self) } ?? Self.hex(16)
        let spanID = Self.hex(8)
        own[Key.self] = "00-\(traceID)-\(spanID)-01"
        return TestSpan(name: operationName, context: own, traceID: traceID, spanID: spanID,
                        parentID: parent.map { String(decoding: $0[36 ..< 52], as: UTF8.self) } ?? "", tracer: self)
    }

    func activeSpan(identifiedBy context: ServiceContext) -> TestSpan? { nil }

    func forceFlush() {}

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
        where Extract.Carrier == Carrier {
        if let value = extractor.extract(key: "traceparent", from: carrier) { context[Key.self] = value }
    }

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
        where Inject.Carrier == Carrier {
        if let value = context[Key.self] { injector.inject(value, forKey: "traceparent", into: &carrier) }
    }

    static func hex(_ bytes: Int) -> String {
        (0 ..< bytes).map { _ in
            let byte = UInt8.random(in: 1 ... .max)
            return String(byte >> 4, radix: 16) + String(byte & 0xF, radix: 16)
        }.joined()
    }
}

final class TestSpan: Span, Sendable {
    let context: ServiceContext
    private let record: Mutex<W3CTestTracer.Ended>
    private let tracer: W3CTestTracer

    init(name: String, context: ServiceContext, traceID: String, spanID: String, parentID: String, tracer: W3CTestTracer) {
        self.context = context
        self.tracer = tracer
        record = Mutex(.init(name: name, traceID: traceID, spanID: spanID, parentID: parentID, attributes: [:]))
    }

    var operationName: String {
        get { record.withLock { $0.name } }
        set { record.withLock { $0.name = newValue } }
    }

    var attributes: SpanAttributes {
        get { [:] }
        set {
            var strings: [String: String] = [:]
            newValue.forEach { key, value in strings[key] = "\(value)" }
            record.withLock { $0.attributes.merge(strings) { $1 } }
        }
    }

    var isRecording: Bool { true }

    func setStatus(_ status: SpanStatus) {}
    func addEvent(_ event: SpanEvent) {}
    func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {}
    func addLink(_ link: SpanLink) {}

    func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        let ended = record.withLock { $0 }
        tracer.ended.withLock { $0.append(ended) }
    }
}
