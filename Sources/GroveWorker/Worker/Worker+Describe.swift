import Foundation
import GroveCheck
package import GroveCluster

/// What a worker asked to describe its machines prints and exits with: the answer to
/// `--describe TYPE` or `--describe-machines`, decided apart from the process so that a test
/// reads it without one.
package struct DescribeAnswer: Sendable, Equatable {
    /// Data: a state graph or the list of names, as JSON.
    package var stdout: String
    /// For people: what was wrong and what to do.
    package var stderr: String
    package var status: WorkerExitStatus
}

extension Worker {
    /// The limit of concrete states a description walks when `--describe-limit` is not given:
    /// fsm-check's default too.
    package static let defaultDescribeLimit = 10_000

    /// Answers `--describe TYPE` (the machine's explored ``StateGraph``, status 0, or an error
    /// naming the describable types, status 64) and `--describe-machines` (their names).
    package static func describe(_ configuration: WorkerConfiguration, _ options: Options) async -> DescribeAnswer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        func json(_ value: some Encodable) -> DescribeAnswer {
            do {
                return DescribeAnswer(stdout: String(decoding: try encoder.encode(value), as: UTF8.self) + "\n", stderr: "", status: .stopped)
            } catch {
                return DescribeAnswer(stdout: "", stderr: "error: the description did not encode as JSON: \(error)\n", status: .failed)
            }
        }
        guard let type = options.describe else { return json(configuration.checkableTypes) }
        guard let explore = configuration.descriptions[type] else {
            let known = configuration.checkableTypes
            let hosted = configuration.machineTypes.contains(type)
                ? " It hosts '\(type)', but no Checkable description of it: add `worker.checkable(\(type).self)` (a Checkable type naming its sample events)"
                    + "; when that type has another name (a dialect's, or a machine registered `as: \"\(type)\"`), "
                    + "`worker.checkable(ItsType.self, as: \"\(type)\")`."
                : ""
            let describes = known.isEmpty
                ? "it describes none (WorkerConfiguration.checkable(_:) makes a machine describable)"
                : "it describes \(known.joined(separator: ", "))"
            return DescribeAnswer(stdout: "", stderr: "error: no describable machine type '\(type)' in this worker; \(describes).\(hosted)\n",
                                  status: .usage)
        }
        return json(await explore(options.describeLimit ?? defaultDescribeLimit))
    }

    /// Prints ``describe(_:_:)``'s answer and exits with its status: a description never starts
    /// a worker.
    static func describeAndExit(_ configuration: WorkerConfiguration, _ options: Options) async -> Never {
        let answer = await describe(configuration, options)
        FileHandle.standardOutput.write(Data(answer.stdout.utf8))
        FileHandle.standardError.write(Data(answer.stderr.utf8))
        exit(answer.status.rawValue)
    }
}
