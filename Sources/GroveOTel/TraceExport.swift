public import Foundation
public import Logging
import OTel
import ServiceLifecycle
import Tracing

/// Exports the spans of one of Grove's executables (fsm-launch, fsm-worker, fsm-send) to an
/// OpenTelemetry collector over OTLP/HTTP, through swift-otel, when the environment names one:
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` (the OpenTelemetry
/// variables; fsm-launch's workers inherit them). Off otherwise: no tracer is bootstrapped, so
/// every process of the topology keeps tracing to a test of a `nil` constant
/// (docs/ARCHITECTURE.md, "Traces").
///
/// The other OpenTelemetry variables apply as swift-otel reads them: among them
/// `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` (`http/protobuf`, the default here, or `http/json`),
/// `OTEL_BSP_SCHEDULE_DELAY` (milliseconds between exports) and `OTEL_TRACES_SAMPLER`.
///
/// ```swift
/// let export = try TraceExport.start(process: "fsm-send", log: log)   // nil: tracing is off
/// // ... run ...
/// await export?.finish()                                              // flushes what is left
/// ```
public final class TraceExport: Sendable {
    private let group: ServiceGroup
    private let running: Task<Void, Never>

    private init(group: ServiceGroup, log: Logger) {
        self.group = group
        running = Task.detached {
            do {
                try await group.run()
            } catch {
                log.warning("trace export stopped: \(error)")
            }
        }
    }

    /// Whether the environment asks for traces.
    public static func isRequested(in environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        for name in ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"] {
            if let value = environment[name], !value.isEmpty { return true }
        }
        return false
    }

    /// Bootstraps swift-otel's tracer as the process's (`InstrumentationSystem`) and starts
    /// exporting in a task of its own, when ``isRequested(in:)``; else does nothing.
    /// - Parameters:
    ///   - process: The OpenTelemetry `service.name` (`fsm-launch`, `fsm-worker`, `fsm-send`);
    ///     `process.pid` and `grove.name` (a worker's name) are resource attributes beside it.
    ///   - name: The worker's name, for `grove.name`.
    /// - Returns: The export to ``finish()`` before the process ends, or `nil` when tracing is off.
    /// - Throws: What swift-otel throws for a configuration it cannot use (a bad endpoint or
    ///   protocol in the environment), saying which.
    public static func start(process: String, name: String? = nil, log: Logger) throws -> TraceExport? {
        guard isRequested() else { return nil }
        var configuration = OTel.Configuration.default
        configuration.serviceName = process
        configuration.resourceAttributes["process.pid"] = "\(getpid())"
        if let name { configuration.resourceAttributes["grove.name"] = name }
        configuration.traces.enabled = true
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        // Only OTLP/HTTP is built in (Package.swift: swift-otel without its gRPC trait).
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        configuration.diagnosticLogLevel = .warning
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(backend.factory)
        let export = TraceExport(group: ServiceGroup(services: [backend.service], logger: log), log: log)
        log.debug("exporting traces over OTLP/HTTP")
        return export
    }

    /// Exports what is left and stops; swift-otel's export timeout bounds the wait for a
    /// collector that does not answer.
    public func finish() async {
        await group.triggerGracefulShutdown()
        await running.value
    }

    /// ``finish()`` for a synchronous caller (fsm-send's `main`), waiting at most `timeout`.
    public func finishBlocking(timeout: Duration = .seconds(5)) {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await self.finish()
            done.signal()
        }
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        _ = done.wait(timeout: .now() + seconds)
    }
}
