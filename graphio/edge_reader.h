// Reading edge streams: the vocabulary shared by readers, writers and generators (Edge,
// EdgeRecord, EdgeFormat), byte sources, a buffered line reader, and EdgeReader for the two
// edge formats of docs/input-formats.md:
//
//   text    "src dst [weight]" per line; "- src dst" deletes; '#'/'%' comment lines; blank
//           lines; fields separated by spaces or tabs; CRLF accepted.
//   binary  "SGEDGES1": header, checksummed blocks of fixed-size little-endian records, and a
//           trailer with the record count and an xxHash64 of the whole stream.
//
// Nothing here is thread-safe; use one reader per thread.
#pragma once

#include <bit>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/status.h"
#include "strata/types.h"

namespace strata::graphio {

// ---------------------------------------------------------------------------------------------
// Vocabulary.

// One edge of a generated or loaded graph. Unweighted edges carry weight 1.0, the store's
// convention for unweighted edges.
struct Edge {
  VertexId src = 0;
  VertexId dst = 0;
  double weight = 1.0;
};

enum class EdgeOp : uint8_t {
  kInsert = 0,  // insert (src, dst) or overwrite its weight
  kDelete = 1,  // delete (src, dst); weight is meaningless (0 when read back from binary)
};

// One update of an edge stream.
struct EdgeRecord {
  EdgeOp op = EdgeOp::kInsert;
  VertexId src = 0;
  VertexId dst = 0;
  double weight = 1.0;

  bool operator==(const EdgeRecord&) const = default;
};

enum class EdgeFormat : uint8_t {
  kAuto = 0,    // readers only: binary if the input starts with "SGEDGES1", else text
  kText = 1,
  kBinary = 2,
};

// "auto", "text", "binary".
const char* EdgeFormatName(EdgeFormat f);
// Accepts "auto", "text"/"txt", "binary"/"bin"; InvalidArgument otherwise.
Status ParseEdgeFormat(std::string_view name, EdgeFormat* format);

// ---------------------------------------------------------------------------------------------
// Byte sources.

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to n > 0 bytes into dst and sets *got; *got == 0 only at the end of the input.
  // Errors are IOError naming the source.
  virtual Status Read(char* dst, size_t n, size_t* got) = 0;
  // For messages: a path, "<stdin>", or "" for in-memory input.
  virtual const std::string& name() const = 0;
};

// Reads from descriptors (NewFileSource, NewFdSource) retry a read a signal interrupted (EINTR)
// unless *flag is non-zero then: such a read returns Status::Aborted("<name>: read interrupted
// by a signal"). Lets `strata ingest` stop reading a pipe or terminal on SIGINT/SIGTERM (its
// handlers are installed without SA_RESTART). Null (the default) always retries.
void SetReadInterruptFlag(const volatile std::sig_atomic_t* flag);

// Opens `path` for sequential reading. NotFound if it does not exist, IOError otherwise.
Status NewFileSource(const std::string& path, std::unique_ptr<ByteSource>* out);
// Reads from a descriptor the caller keeps open (e.g. 0 for stdin, named "<stdin>").
std::unique_ptr<ByteSource> NewFdSource(int fd, std::string name);
// Reads from memory (tests, small inputs). `name` appears in messages when non-empty.
std::unique_ptr<ByteSource> NewStringSource(std::string data, std::string name = "");

// A ByteSource with a buffer that gives contiguous look-ahead: Ensure(n) makes n bytes readable
// at data() (growing the buffer if needed), Consume(n) moves past them.
//
// Invariant: data()[0 .. available()) are the input bytes at offsets [offset(),
// offset() + available()), and no byte is ever returned twice.
class BufferedInput {
 public:
  BufferedInput(std::unique_ptr<ByteSource> source, size_t capacity);
  BufferedInput(const BufferedInput&) = delete;
  BufferedInput& operator=(const BufferedInput&) = delete;

  // Reads until available() >= n or the input ends (then available() < n and at_end()).
  // Reads fill as much of the buffer as they can, so small Ensure()s stay cheap.
  Status Ensure(size_t n);
  // Reads at least one more byte unless the input has ended; the buffer grows if it is full.
  Status ReadMore();
  const char* data() const { return buf_.get() + pos_; }
  size_t available() const { return end_ - pos_; }
  // Requires n <= available().
  void Consume(size_t n) {
    pos_ += n;
    offset_ += n;
  }
  // Input offset of data()[0].
  uint64_t offset() const { return offset_; }
  // True once the source reported its end; bytes may still be available().
  bool at_end() const { return at_end_; }
  size_t capacity() const { return cap_; }
  const std::string& name() const { return source_->name(); }

 private:
  // Moves the unread bytes to the front and reads once into the free space.
  Status Fill();

  std::unique_ptr<ByteSource> source_;
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0;
  size_t pos_ = 0;  // first unread byte
  size_t end_ = 0;  // one past the last byte read
  uint64_t offset_ = 0;
  bool at_end_ = false;
};

// Splits a byte stream into lines. A line ends at '\n' (a '\r' before it is dropped) or at the
// end of the input; an empty input has no lines, and "a\n" has one line.
class LineReader {
 public:
  // Lines longer than max_line bytes (at least 16) are rejected, never buffered whole.
  explicit LineReader(std::unique_ptr<ByteSource> source, size_t max_line = size_t{1} << 20);
  // Takes over an input another reader has started (used by EdgeReader's format detection).
  LineReader(std::unique_ptr<BufferedInput> input, size_t max_line);
  ~LineReader();

  // Sets *line to the next line and *eof = false, or *eof = true at the end. The view stays
  // valid until the next call. A line longer than max_line returns InvalidArgument
  // "<name>: line N: longer than M bytes (starts with '...')"; the next call resumes after it.
  Status Next(std::string_view* line, bool* eof);
  // 1-based number of the line last returned (or rejected); 0 before the first.
  uint64_t line_number() const { return line_number_; }
  const std::string& name() const { return input_->name(); }
  // Input bytes up to and including the line last returned.
  uint64_t bytes_consumed() const { return input_->offset() + pending_consume_; }

 private:
  std::unique_ptr<BufferedInput> input_;
  size_t max_line_;
  size_t pending_consume_ = 0;  // bytes of the line last returned, still in the buffer
  uint64_t line_number_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The binary edge format (docs/input-formats.md has the byte layout). All integers and doubles
// little-endian.
//
//   stream  := header block* trailer
//   header  := "SGEDGES1" | u32 flags | u32 low 32 bits of XXH64(header[0..12), seed 0)
//   block   := u32 count (1..kMaxBlockRecords) | u32 block_flags
//              | [op bitmap, ceil(count/8) bytes, bit i set = record i deletes; only if
//                 block_flags & kBlockHasDeletes]
//              | count records: u64 src | u64 dst | [f64 weight, iff flags & kFlagWeighted]
//              | u64 XXH64(block bytes before this field, seed = 0-based block ordinal)
//   trailer := u32 0 | u32 0 | u64 record count | u64 XXH64(all stream bytes before the
//              trailer, seed 0) | "SGEDEND1"
namespace edge_binary {
inline constexpr char kMagic[8] = {'S', 'G', 'E', 'D', 'G', 'E', 'S', '1'};
inline constexpr char kEndMagic[8] = {'S', 'G', 'E', 'D', 'E', 'N', 'D', '1'};
inline constexpr size_t kHeaderSize = 16;
inline constexpr uint32_t kFlagWeighted = 1u;
inline constexpr uint32_t kKnownFlags = kFlagWeighted;
inline constexpr size_t kBlockHeaderSize = 8;
inline constexpr size_t kBlockChecksumSize = 8;
inline constexpr uint32_t kBlockHasDeletes = 1u;
inline constexpr uint32_t kKnownBlockFlags = kBlockHasDeletes;
inline constexpr uint32_t kMaxBlockRecords = 65536;
inline constexpr uint32_t kWriterBlockRecords = 4096;
inline constexpr size_t kTrailerSize = 32;
inline constexpr size_t RecordSize(bool weighted) { return weighted ? 24 : 16; }

// Little-endian fixed-width encoding (also used by the ID dictionary's file).
inline void StoreLE32(char* p, uint32_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
}
inline void StoreLE64(char* p, uint64_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}
inline uint32_t LoadLE32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  return v;
}
inline uint64_t LoadLE64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}
inline void StoreDoubleLE(char* p, double d) { StoreLE64(p, std::bit_cast<uint64_t>(d)); }
inline double LoadDoubleLE(const char* p) { return std::bit_cast<double>(LoadLE64(p)); }
}  // namespace edge_binary

// ---------------------------------------------------------------------------------------------
// EdgeReader.

struct EdgeReaderOptions {
  EdgeFormat format = EdgeFormat::kAuto;
  // Text only: count malformed lines (bad_lines()) instead of failing on the first one.
  bool skip_bad_lines = false;
  // Text only: which column after "src dst" holds the weight (0 = the third field); -1 means
  // the input has no weight column and every record gets weight 1.0.
  int weight_column = 0;
  // Text only: accept and ignore columns other than src, dst and the weight column (LDBC
  // Graphalytics files may carry several edge properties). Off: extra columns are malformed.
  bool allow_extra_columns = false;
  // Read buffer; also the longest text line accepted.
  size_t buffer_bytes = size_t{4} << 20;
};

class EdgeReader {
 public:
  // Opens a file ("-" is stdin). Detects the format if options.format is kAuto, and checks
  // the binary header: a bad one is Corruption, an unknown flag NotSupported.
  static Status Open(const std::string& path, const EdgeReaderOptions& options,
                     std::unique_ptr<EdgeReader>* reader);
  static Status FromSource(std::unique_ptr<ByteSource> source, const EdgeReaderOptions& options,
                           std::unique_ptr<EdgeReader>* reader);
  ~EdgeReader();
  EdgeReader(const EdgeReader&) = delete;
  EdgeReader& operator=(const EdgeReader&) = delete;

  // Sets *record and *eof = false, or *eof = true after the last record. Errors:
  //   text:   InvalidArgument "[<name>: ]line N: expected 'src dst [weight]', got: '<line>'
  //           (<reason>)" unless skip_bad_lines; IOError from the source.
  //   binary: Corruption naming the offset for a checksum mismatch, a truncated stream (no
  //           trailer), a record count mismatch or bytes after the trailer. A block is verified
  //           before any of its records is returned; the stream checksum and count are checked
  //           when the trailer is reached, before *eof is reported.
  // After an error the reader stays failed and returns the same error.
  Status Next(EdgeRecord* record, bool* eof);
  // Replaces *batch with up to max >= 1 records; an empty batch means the end.
  Status NextBatch(std::vector<EdgeRecord>* batch, size_t max);

  EdgeFormat format() const { return format_; }
  // Binary: the header's weighted flag. Text: whether the weight column is read at all.
  bool weighted() const { return weighted_; }
  uint64_t records() const { return records_; }
  // Text: records that had a weight field (the rest got 1.0).
  uint64_t records_with_weight() const { return records_with_weight_; }
  // Text with skip_bad_lines: lines skipped, and the message the first one would have given.
  uint64_t bad_lines() const { return bad_lines_; }
  const std::string& first_bad_line() const { return first_bad_line_; }
  // Text: number of the line last read. Binary: 0.
  uint64_t line_number() const;
  // Bytes consumed from the input so far.
  uint64_t bytes_consumed() const;

 private:
  struct BinaryState;
  EdgeReader(const EdgeReaderOptions& options);
  Status NextText(EdgeRecord* record, bool* eof);
  Status NextBinary(EdgeRecord* record, bool* eof);
  Status LoadBlock(bool* eof);
  // Parses one text line; false with *why set if malformed. Comment and blank lines set
  // *skip.
  bool ParseLine(std::string_view line, EdgeRecord* record, bool* skip, const char** why,
                 bool* has_weight) const;
  Status Fail(Status s);

  EdgeReaderOptions options_;
  EdgeFormat format_ = EdgeFormat::kText;
  bool weighted_ = false;
  Status error_;  // sticky
  std::unique_ptr<LineReader> lines_;   // text
  std::unique_ptr<BufferedInput> in_;   // binary
  std::unique_ptr<BinaryState> bin_;    // binary
  uint64_t records_ = 0;
  uint64_t records_with_weight_ = 0;
  uint64_t bad_lines_ = 0;
  std::string first_bad_line_;
};

}  // namespace strata::graphio
