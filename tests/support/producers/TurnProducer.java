// A gateway in Java: turns as JSON lines (stdin, or the file named after the topic) into the turns topic,
// each keyed by its session key as UTF-8 bytes, placed by kafka-clients' DEFAULT partitioner (no
// partitioner.class, no partitioner.ignore.keys), acks=all, the value the line's own bytes.
//
//   java -cp '.kafka/lib/*' tests/support/producers/TurnProducer.java BOOTSTRAP TOPIC [FILE]
//
// Prints "sent N" once every record is acknowledged; exits 1 on the first failed send, 2 on bad input.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class TurnProducer {
    /** One id as a key part: %, :, { and } percent-escaped in one pass, everything else as it is. */
    static String escape(String part) {
        StringBuilder out = new StringBuilder(part.length());
        for (char c : part.toCharArray()) {
            switch (c) {
                case '%' -> out.append("%25");
                case ':' -> out.append("%3A");
                case '{' -> out.append("%7B");
                case '}' -> out.append("%7D");
                default -> out.append(c);
            }
        }
        return out.toString();
    }

    /** `tenant:session_id` (escaped parts), or the escaped `session_id` when the turn has no tenant. */
    static String sessionKey(JsonNode turn) {
        JsonNode session = turn.get("session_id");
        if (session == null || !session.isTextual()) {
            throw new IllegalArgumentException("a turn without a string session_id");
        }
        JsonNode tenant = turn.get("tenant");
        String sessionPart = escape(session.asText());
        if (tenant == null || tenant.isNull() || tenant.asText().isEmpty()) {
            return sessionPart;
        }
        return escape(tenant.asText()) + ":" + sessionPart;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2 || args.length > 3) {
            System.err.println("usage: TurnProducer BOOTSTRAP TOPIC [FILE]  (JSON lines of turns on stdin without FILE)");
            System.exit(2);
        }
        String bootstrap = args[0], topic = args[1];
        ObjectMapper json = new ObjectMapper();
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        InputStream input = args.length == 3 ? Files.newInputStream(Path.of(args[2])) : System.in;
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(input, StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                byte[] key = sessionKey(json.readTree(line)).getBytes(StandardCharsets.UTF_8);
                records.add(new ProducerRecord<>(topic, key, line.getBytes(StandardCharsets.UTF_8)));
            }
        } catch (Exception error) {
            System.err.println("bad input: " + error.getMessage());
            System.exit(2);
        }

        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
            List<Future<RecordMetadata>> sent = new ArrayList<>(records.size());
            for (ProducerRecord<byte[], byte[]> record : records) {
                sent.add(producer.send(record));
            }
            producer.flush();
            for (Future<RecordMetadata> ack : sent) {
                try {
                    ack.get();
                } catch (Exception error) {
                    System.err.println("send failed: " + error.getMessage());
                    System.exit(1);
                }
            }
        }
        System.out.println("sent " + records.size());
    }
}
