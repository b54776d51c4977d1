import Foundation

/// CPU time and resident memory of a process, from /proc (Linux).
struct ProcessStats: Sendable {
    var cpuSeconds: Double
    var residentBytes: Int

    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// `nil` when the process is not on this host (or gone).
    static func read(pid: Int32) -> ProcessStats? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        var resident = 0
        if let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) {
            resident = (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
        }
        return ProcessStats(cpuSeconds: (user + system) / ticksPerSecond, residentBytes: resident)
    }
}
