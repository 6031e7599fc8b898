import Foundation
import ParleyCore

/// Width, height, duration and JPEG thumbnails with libvips (images) and ffmpeg (videos).
///
/// Both respect orientation: `vips thumbnail` applies EXIF orientation, and ffmpeg
/// autorotates by the video's display matrix. Neither enlarges a small picture.
public struct ToolMediaProcessor: MediaProcessor {
    let runner: ToolRunner

    public init(runner: ToolRunner = ToolRunner()) { self.runner = runner }

    public func process(input: String, mimeType: String, workDirectory: String) async throws -> MediaDetails {
        if mimeType.hasPrefix("image/") { return try await image(input, workDirectory: workDirectory) }
        if mimeType.hasPrefix("video/") { return try await video(input, workDirectory: workDirectory) }
        return MediaDetails()
    }

    func image(_ input: String, workDirectory: String) async throws -> MediaDetails {
        let header = try await runner.run("vipsheader", ["-a", input])
        var fields: [String: String] = [:]
        for line in header.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].trimmingCharacters(in: .whitespaces)] =
                line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        guard let width = fields["width"].flatMap({ Int($0) }), let height = fields["height"].flatMap({ Int($0) })
        else {
            throw ToolRunner.Failure(tool: "vipsheader", status: 0, output: "no size")
        }
        // Orientations 5 to 8 turn the picture by a quarter.
        let turned = (5...8).contains(fields["orientation"].flatMap { Int($0.prefix(1)) } ?? 1)
        var details = MediaDetails(width: turned ? height : width, height: turned ? width : height)
        for size in ThumbnailSize.allCases {
            let output = "\(workDirectory)/\(size.rawValue).jpg"
            try await runner.run(
                "vips",
                [
                    "thumbnail", input, "\(output)[Q=80,strip]", "\(size.bound)", "--height", "\(size.bound)",
                    "--size", "down", "--fail-on", "error",
                ])
            details.setThumbnail(output, for: size)
        }
        return details
    }

    struct Probe: Decodable {
        struct Stream: Decodable {
            let width: Int?
            let height: Int?
            // swift-format-ignore: AlwaysUseLowerCamelCase
            let side_data_list: [SideData]?
        }
        struct SideData: Decodable { let rotation: Int? }
        struct Format: Decodable { let duration: String? }
        let streams: [Stream]
        let format: Format?
    }

    func video(_ input: String, workDirectory: String) async throws -> MediaDetails {
        let json = try await runner.run(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "v:0", "-show_entries",
                "stream=width,height:stream_side_data=rotation:format=duration", "-of", "json", input,
            ])
        let probe = try JSONDecoder().decode(Probe.self, from: Data(json.utf8))
        guard let stream = probe.streams.first, let width = stream.width, let height = stream.height, width > 0 else {
            throw ToolRunner.Failure(tool: "ffprobe", status: 0, output: "no video stream")
        }
        let rotation = abs(stream.side_data_list?.compactMap(\.rotation).first ?? 0) % 180
        var details = MediaDetails(
            width: rotation == 90 ? height : width, height: rotation == 90 ? width : height,
            durationMs: probe.format?.duration.flatMap(Double.init).map { Int64(($0 * 1000).rounded()) })
        for size in ThumbnailSize.allCases {
            let output = "\(workDirectory)/\(size.rawValue).jpg"
            let bound = size.bound
            try await runner.run(
                "ffmpeg",
                [
                    "-nostdin", "-v", "error", "-threads", "1", "-y", "-ss", "0", "-i", input, "-frames:v", "1",
                    "-an", "-sn", "-dn", "-bitexact", "-filter_threads", "1", "-vf",
                    "scale=w='min(\(bound),iw)':h='min(\(bound),ih)':force_original_aspect_ratio=decrease",
                    "-q:v", "3", "-f", "image2", "-update", "1", output,
                ])
            details.setThumbnail(output, for: size)
        }
        return details
    }
}
