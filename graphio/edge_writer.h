// Writing edge streams in the text or binary format of docs/input-formats.md (the inverse of
// EdgeReader): byte sinks and EdgeWriter.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/status.h"
#include "graphio/edge_reader.h"

namespace strata::graphio {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Appends all of data or fails with IOError naming the sink.
  virtual Status Append(std::string_view data) = 0;
  // Makes everything appended so far durable (fsync for files; a no-op elsewhere).
  virtual Status Sync() { return Status::OK(); }
  // Flushes and releases the sink; later Appends fail.
  virtual Status Close() = 0;
  virtual const std::string& name() const = 0;
};

// Creates or truncates `path`.
Status NewFileSink(const std::string& path, std::unique_ptr<ByteSink>* out);
// Writes to a descriptor the caller keeps open (e.g. 1 for stdout, named "<stdout>").
std::unique_ptr<ByteSink> NewFdSink(int fd, std::string name);
// Appends to *out, which must outlive the sink.
std::unique_ptr<ByteSink> NewStringSink(std::string* out);
// Writes to *out, which must outlive the sink. A stream in a failed state is an IOError.
std::unique_ptr<ByteSink> NewOstreamSink(std::ostream* out, std::string name = "<ostream>");

struct EdgeWriterOptions {
  EdgeFormat format = EdgeFormat::kText;  // kAuto is invalid for a writer
  // Write the weight of inserts. Off: weights are dropped (readers then give 1.0).
  bool weighted = false;
  // Finish() fsyncs the sink before closing it.
  bool sync_on_finish = false;
};

// Buffers records and writes them in large chunks.
//
// Text output: "src dst\n" or "src dst weight\n" for inserts (weight in the shortest form that
// reads back to the same double), "- src dst\n" for deletes.
// Binary output: header, then blocks of edge_binary::kWriterBlockRecords records, then at
// Finish() the last block and the trailer. A binary stream whose writer was never Finish()ed
// has no trailer, so readers report it as truncated.
class EdgeWriter {
 public:
  // Creates or truncates `path` ("-" is stdout).
  static Status Open(const std::string& path, const EdgeWriterOptions& options,
                     std::unique_ptr<EdgeWriter>* writer);
  static Status ToSink(std::unique_ptr<ByteSink> sink, const EdgeWriterOptions& options,
                       std::unique_ptr<EdgeWriter>* writer);
  // Does not Finish(): an abandoned writer leaves an incomplete stream.
  ~EdgeWriter();
  EdgeWriter(const EdgeWriter&) = delete;
  EdgeWriter& operator=(const EdgeWriter&) = delete;

  // After the first error every call returns it.
  Status Add(const EdgeRecord& record);
  Status Insert(VertexId src, VertexId dst, double weight = 1.0) {
    return Add(EdgeRecord{EdgeOp::kInsert, src, dst, weight});
  }
  Status Delete(VertexId src, VertexId dst) {
    return Add(EdgeRecord{EdgeOp::kDelete, src, dst, 0.0});
  }
  // Inserts every edge.
  Status AddEdges(const Edge* edges, size_t n);
  Status AddEdges(const std::vector<Edge>& edges) { return AddEdges(edges.data(), edges.size()); }
  // Writes what is buffered (and the binary trailer), then closes the sink. Idempotent.
  Status Finish();

  uint64_t records() const { return records_; }
  // Bytes handed to the sink plus bytes buffered.
  uint64_t bytes() const { return flushed_bytes_ + out_.size(); }
  const EdgeWriterOptions& options() const { return options_; }

 private:
  struct BinaryState;
  explicit EdgeWriter(const EdgeWriterOptions& options, std::unique_ptr<ByteSink> sink);
  void AppendText(const EdgeRecord& r);
  void AppendBinary(const EdgeRecord& r);
  void EmitBlock();  // moves the pending binary block into out_
  Status FlushOut();

  EdgeWriterOptions options_;
  std::unique_ptr<ByteSink> sink_;
  std::unique_ptr<BinaryState> bin_;
  std::string out_;  // bytes not yet handed to the sink
  uint64_t flushed_bytes_ = 0;
  uint64_t records_ = 0;
  bool finished_ = false;
  Status error_;  // sticky
};

}  // namespace strata::graphio
