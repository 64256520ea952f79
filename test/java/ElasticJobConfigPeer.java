// A Java reader and writer of the config node, for the config interop test: what a Java ElasticJob instance does
// with `/{job}/config` (docs/reference/elasticjob.md §1.4, §2.1), rebuilt from ElasticJob's behaviour with the
// libraries it uses (Debian libyaml-snake-java, libquartz2-java), since ElasticJob itself cannot be installed here.
// - read: SnakeYAML loadAs into a bean shaped as ElasticJob's JobConfigurationPOJO (same property names and Java
//   types: an unknown key or a value of the wrong type fails as it does there, ElasticJob's YamlEngine.unmarshal);
// - check: what building and scheduling the job checks (jobName not empty, shardingTotalCount > 0, Quartz's
//   CronExpression, a time zone starting with "GMT" as JobScheduleController.parseTimeZoneString requires);
// - write: SnakeYAML dumpAsMap with nulls and empty collections dropped (ElasticJob's YamlEngine.marshal with its
//   ElasticJobYamlRepresenter).
// Usage: java -cp snakeyaml.jar:quartz2.jar ElasticJobConfigPeer.java
// Reads YAML documents on stdin, each ended by a line "#end"; prints per document one line:
// "OK <fields as JSON> <the document as Java writes it back, base64>" or "ERROR <message>".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.quartz.CronExpression;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.Constructor;
import org.yaml.snakeyaml.introspector.Property;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.Tag;
import org.yaml.snakeyaml.representer.Representer;

public class ElasticJobConfigPeer {
    /** The config node's bean: JobConfigurationPOJO's properties and Java types (elasticjob.md §2.1). */
    public static class Pojo {
        public String jobName;
        public String cron;
        public String timeZone;
        public int shardingTotalCount;
        public String shardingItemParameters;
        public String jobParameter;
        public boolean monitorExecution;
        public boolean failover;
        public boolean misfire;
        public int maxTimeDiffSeconds = -1;
        public int reconcileIntervalMinutes;
        public String jobShardingStrategyType;
        public String jobExecutorThreadPoolSizeProviderType;
        public String jobErrorHandlerType;
        public Collection<String> jobListenerTypes = new ArrayList<>();
        public Collection<Object> jobExtraConfigurations = new ArrayList<>();
        public String description;
        public Properties props = new Properties();
        public boolean disabled;
        public boolean overwrite;
        public String label;
        public boolean staticSharding;
    }

    /** Drops what ElasticJob's representer drops: nulls, empty collections and maps. */
    static class DroppingRepresenter extends Representer {
        DroppingRepresenter() {
            super(new DumperOptions());
        }

        @Override
        protected NodeTuple representJavaBeanProperty(Object bean, Property property, Object value, Tag tag) {
            if (value == null) return null;
            if (value instanceof Collection && ((Collection<?>) value).isEmpty()) return null;
            if (value instanceof Map && ((Map<?, ?>) value).isEmpty()) return null;
            return super.representJavaBeanProperty(bean, property, value, tag);
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder document = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            if (!line.equals("#end")) {
                document.append(line).append('\n');
                continue;
            }
            System.out.println(handle(document.toString()));
            document.setLength(0);
        }
    }

    static String handle(String text) {
        try {
            Pojo pojo = new Yaml(new Constructor(Pojo.class, new LoaderOptions())).loadAs(text, Pojo.class);
            check(pojo);
            Yaml writer = new Yaml(new DroppingRepresenter(), new DumperOptions());
            String written = writer.dumpAsMap(pojo);
            return "OK " + json(pojo) + " "
                    + Base64.getEncoder().encodeToString(written.getBytes(StandardCharsets.UTF_8));
        } catch (Exception error) {
            return "ERROR " + error.getClass().getSimpleName() + ": " + error.getMessage().replace('\n', ' ');
        }
    }

    static void check(Pojo pojo) throws Exception {
        if (pojo.jobName == null || pojo.jobName.isEmpty()) throw new IllegalArgumentException("jobName can not be empty.");
        if (pojo.shardingTotalCount <= 0) throw new IllegalArgumentException("shardingTotalCount should larger than zero.");
        if (pojo.cron != null && !pojo.cron.isEmpty()) new CronExpression(pojo.cron);
        if (pojo.timeZone != null && !pojo.timeZone.isEmpty() && !pojo.timeZone.startsWith("GMT"))
            throw new IllegalArgumentException("Invalid time zone specification '" + pojo.timeZone + "'.");
    }

    static String json(Pojo pojo) {
        Map<String, Object> fields = new TreeMap<>();
        fields.put("jobName", pojo.jobName);
        fields.put("cron", pojo.cron);
        fields.put("timeZone", pojo.timeZone);
        fields.put("shardingTotalCount", pojo.shardingTotalCount);
        fields.put("shardingItemParameters", pojo.shardingItemParameters);
        fields.put("jobParameter", pojo.jobParameter);
        fields.put("monitorExecution", pojo.monitorExecution);
        fields.put("failover", pojo.failover);
        fields.put("misfire", pojo.misfire);
        fields.put("maxTimeDiffSeconds", pojo.maxTimeDiffSeconds);
        fields.put("reconcileIntervalMinutes", pojo.reconcileIntervalMinutes);
        fields.put("jobShardingStrategyType", pojo.jobShardingStrategyType);
        fields.put("jobErrorHandlerType", pojo.jobErrorHandlerType);
        fields.put("description", pojo.description);
        fields.put("disabled", pojo.disabled);
        fields.put("overwrite", pojo.overwrite);
        fields.put("staticSharding", pojo.staticSharding);
        StringBuilder out = new StringBuilder("{");
        for (Map.Entry<String, Object> field : fields.entrySet()) {
            if (out.length() > 1) out.append(',');
            out.append('"').append(field.getKey()).append("\":").append(value(field.getValue()));
        }
        return out.append('}').toString();
    }

    static String value(Object value) {
        if (value == null) return "null";
        if (value instanceof String) {
            String text = ((String) value).replace("\\", "\\\\").replace("\"", "\\\"");
            return '"' + text + '"';
        }
        return value.toString();
    }
}
