/*
 * A Delta LogStore for the local file system whose commits are atomic across processes.
 *
 * Spark's default LocalLogStore checks that the commit file is absent and then renames a temporary
 * file onto it; its lock is a JVM-local object, so two processes (two Spark drivers, or Spark and
 * another engine) can both pass the check and the second rename silently replaces the first
 * commit. This store writes the whole commit to a temporary file beside the target and publishes it
 * with a hard link, which the kernel refuses when the target exists: exactly one writer of a
 * version wins and every other gets FileAlreadyExistsException, which Delta treats as a conflict
 * and retries on the next version. Reads and listings are the Hadoop file system's.
 *
 * Set with spark.delta.logStore.file.impl=AtomicLinkLogStore. Compiled by `npm run peers:setup`.
 */

import io.delta.storage.HadoopFileSystemLogStore;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

public class AtomicLinkLogStore extends HadoopFileSystemLogStore {
  public AtomicLinkLogStore(Configuration initHadoopConf) {
    super(initHadoopConf);
  }

  @Override
  public void write(Path path, Iterator<String> actions, Boolean overwrite, Configuration hadoopConf)
      throws IOException {
    FileSystem fs = path.getFileSystem(hadoopConf);
    java.nio.file.Path target = new File(fs.makeQualified(path).toUri()).toPath();
    java.nio.file.Path dir = target.getParent();
    Files.createDirectories(dir);
    java.nio.file.Path temp = dir.resolve("." + target.getFileName() + "." + UUID.randomUUID() + ".tmp");
    try {
      try (OutputStream out = Files.newOutputStream(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        while (actions.hasNext()) {
          out.write((actions.next() + "\n").getBytes(StandardCharsets.UTF_8));
        }
      }
      if (overwrite) {
        // _last_checkpoint and other replaceable files: an atomic rename over the old one.
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } else {
        try {
          Files.createLink(target, temp);
        } catch (FileAlreadyExistsException e) {
          throw new FileAlreadyExistsException(target.toString());
        }
      }
    } finally {
      Files.deleteIfExists(temp);
    }
  }

  @Override
  public Boolean isPartialWriteVisible(Path path, Configuration hadoopConf) {
    // The file appears under its name only once complete (link or rename of a finished file).
    return false;
  }
}
