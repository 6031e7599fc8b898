import Foundation

/// CPU time (user + system) of named processes and their descendants, living or ended, from
/// `/proc`: the cost side of a figure, per process involved.
struct ProcessCPU: Sendable {
    /// Name → root process id (PostgreSQL's postmaster counts with its backends).
    let roots: [(name: String, pid: Int32)]

    init(watch: [String]) throws {
        roots = try watch.map { entry in
            let parts = entry.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let pid = Int32(parts[1]) else {
                throw LoadError("--watch takes NAME=PID, not \(entry)")
            }
            return (String(parts[0]), pid)
        }
    }

    /// Seconds of CPU each watched process tree has used so far; this process is `parley-load`.
    func sample() -> [String: Double] {
        let table = Self.processTable()
        let children = Dictionary(grouping: table.keys) { table[$0]!.parent }
        var result: [String: Double] = ["parley-load": table[getpid()]?.seconds ?? 0]
        for (name, pid) in roots {
            var total = 0.0
            var queue = [pid]
            while let next = queue.popLast() {
                total += table[next]?.seconds ?? 0
                queue += children[next] ?? []
            }
            result[name, default: 0] += total
        }
        return result
    }

    /// CPU seconds per operation between two samples.
    static func perOperation(from start: [String: Double], to end: [String: Double], operations: Int) -> [String:
        Double]
    {
        guard operations > 0 else { return [:] }
        return end.reduce(into: [:]) { result, entry in
            result[entry.key] = (entry.value - (start[entry.key] ?? 0)) / Double(operations)
        }
    }

    private static func processTable() -> [Int32: (parent: Int32, seconds: Double)] {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var table: [Int32: (Int32, Double)] = [:]
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // Fields after "(comm)": state ppid ... utime(14) stime(15) cutime(16) cstime(17),
            // counted from 1. The children's times are those of exited children the process
            // waited for: a PostgreSQL backend that ends mid-step moves into the postmaster's,
            // instead of leaving the tree's sum.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 14, let parent = Int32(fields[1]), let user = Double(fields[11]),
                let system = Double(fields[12]), let children = Double(fields[13]),
                let childrenSystem = Double(fields[14])
            else { continue }
            table[pid] = (parent, (user + system + children + childrenSystem) / ticks)
        }
        return table
    }
}
